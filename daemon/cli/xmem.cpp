// xmem: the command dispatcher. `xmem CMD ARGS...` execs the program that the command table
// names for CMD, found next to this executable (a build tree's bin/ or an install's bindir),
// else in XMEM_LIBEXECDIR. Only the table's commands run: a build tree's other executables
// (benchmarks, load generators) are not commands, whatever they are called.
// Why exec and not link: each command is owned and built by a different part of the project
// and may need different libraries (LibTorch for the profilers, SQLite for the report).
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace
{

constexpr int k_exit_usage = 2;
constexpr int k_exit_cannot_run = 126;

struct Command {
    const char *name;    // what the user types after `xmem`
    const char *program; // the executable it runs
};

// Every command, in the order `xmem --help` lists them. A new command adds one line here.
constexpr Command k_commands[] = {
    {"estimate", "xmem-estimate"},
    {"sim", "xmem-sim"},
    {"status", "xmem-status"},
    {"report", "xmem-report"},
    {"calibrate", "xmem-calibrate"},
    {"probe-gpu", "xmem-probe-gpu"},
    {"profile", "xmem-profile"},
    {"profile-fast", "xmem-profile-fast"},
    {"profile-libtorch", "xmem-profile-libtorch"},
};

const Command *find_command(const std::string &name)
{
    for (const Command &c : k_commands)
        if (name == c.name)
            return &c;
    return nullptr;
}

std::string own_directory()
{
    char path[4096];
    ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
    if (n <= 0)
        return "";
    path[n] = '\0';
    char *slash = std::strrchr(path, '/');
    return slash ? std::string(path, static_cast<size_t>(slash - path)) : "";
}

std::vector<std::string> search_dirs()
{
    std::vector<std::string> dirs;
    std::string own = own_directory();
    if (!own.empty())
        dirs.push_back(own);
    if (own != XMEM_LIBEXECDIR)
        dirs.push_back(XMEM_LIBEXECDIR);
    return dirs;
}

bool is_executable_file(const std::string &path)
{
    struct stat st;
    return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(path.c_str(), X_OK) == 0;
}

// Where the command's program is installed, or "" when it is not.
std::string locate(const Command &c)
{
    for (const std::string &dir : search_dirs())
        if (std::string path = dir + "/" + c.program; is_executable_file(path))
            return path;
    return "";
}

// A command name: lower-case letters, digits and '-', so that no path can be smuggled in.
bool valid_command(const std::string &name)
{
    if (name.empty() || name.size() > 64 || !(name[0] >= 'a' && name[0] <= 'z'))
        return false;
    return name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-") == std::string::npos;
}

void print_help()
{
    std::printf("usage: xmem COMMAND [ARGS...]\n       xmem --help | --version\n\n"
                "xmem sizes GPU training jobs before they run. Commands found:\n");
    int found = 0;
    for (const Command &c : k_commands)
        if (!locate(c).empty()) {
            std::printf("  %s\n", c.name);
            ++found;
        }
    if (!found)
        std::printf("  (none: no xmem commands next to xmem or in %s)\n", XMEM_LIBEXECDIR);
    std::printf("\n'xmem COMMAND --help' describes a command.\n");
}

int run(const Command &c, int argc, char **argv)
{
    std::string path = locate(c);
    if (path.empty()) {
        std::fprintf(stderr, "xmem: %s: %s is not installed (looked next to xmem and in %s)\n",
                     c.name, c.program, XMEM_LIBEXECDIR);
        return k_exit_cannot_run;
    }
    std::vector<char *> args;
    std::string name = c.program;
    args.push_back(name.data());
    for (int i = 2; i < argc; ++i)
        args.push_back(argv[i]);
    args.push_back(nullptr);
    execv(path.c_str(), args.data());
    std::fprintf(stderr, "xmem: cannot run %s: %s\n", path.c_str(), std::strerror(errno));
    return k_exit_cannot_run;
}

} // namespace

int main(int argc, char **argv)
{
    if (argc < 2) {
        std::fprintf(stderr, "xmem: no command given (run 'xmem --help' for the list)\n");
        return k_exit_usage;
    }
    std::string command = argv[1];
    if (command == "--help" || command == "-h" || command == "help") {
        print_help();
        return 0;
    }
    if (command == "--version" || command == "-V") {
        std::printf("xmem %s\n", XMEM_VERSION);
        return 0;
    }
    if (!valid_command(command)) {
        std::fprintf(stderr, "xmem: '%s' is not a command (run 'xmem --help' for the list)\n",
                     command.c_str());
        return k_exit_usage;
    }
    if (const Command *c = find_command(command))
        return run(*c, argc, argv);
    std::fprintf(stderr, "xmem: unknown command '%s' (run 'xmem --help' for the list)\n",
                 command.c_str());
    return k_exit_usage;
}
