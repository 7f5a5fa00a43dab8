// xmem: the command dispatcher. `xmem CMD ARGS...` execs `xmem-CMD ARGS...` found next to
// this executable (a build tree's bin/ or an install's bindir), else in XMEM_LIBEXECDIR.
// Why exec and not link: each command (sim, estimate, profile...) is owned and built by a
// different part of the project and may need different libraries (LibTorch for profiling).
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <set>
#include <string>
#include <vector>

namespace
{

constexpr int k_exit_usage = 2;

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

// A command name is what follows "xmem-": lower-case letters, digits and '-'.
bool valid_command(const std::string &name)
{
    if (name.empty() || name.size() > 64 || !(name[0] >= 'a' && name[0] <= 'z'))
        return false;
    return name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-") == std::string::npos;
}

// The project's commands, as `xmem --help` lists them. A build tree's bin/ also holds test and
// bench executables named xmem-* (xmem-test-plugin, xmem-report-unit, xmem-bench-sim...):
// they run with `xmem NAME` like any executable, but are not commands to advertise. A new
// command adds its name here.
constexpr const char *k_commands[] = {
    "estimate", "profile", "profile-fast", "profile-libtorch", "report", "sim", "status",
};

// Listed: the project's commands found in a search directory, and every xmem-* in the
// libexec directory, which holds only installed commands (a site's own commands included).
std::set<std::string> installed_commands()
{
    std::set<std::string> names;
    for (const std::string &dir : search_dirs())
        for (const char *name : k_commands)
            if (is_executable_file(dir + "/xmem-" + name))
                names.insert(name);
    if (DIR *d = opendir(XMEM_LIBEXECDIR)) {
        while (struct dirent *e = readdir(d)) {
            std::string file = e->d_name;
            if (file.rfind("xmem-", 0) == 0 && valid_command(file.substr(5)) &&
                is_executable_file(std::string(XMEM_LIBEXECDIR) + "/" + file))
                names.insert(file.substr(5));
        }
        closedir(d);
    }
    return names;
}

void print_help()
{
    std::printf("usage: xmem COMMAND [ARGS...]\n       xmem --help | --version\n\n"
                "xmem sizes GPU training jobs before they run. Commands found:\n");
    std::set<std::string> names = installed_commands();
    for (const std::string &name : names)
        std::printf("  %s\n", name.c_str());
    if (names.empty())
        std::printf("  (none: no xmem-* executables next to xmem or in %s)\n", XMEM_LIBEXECDIR);
    std::printf("\n'xmem COMMAND --help' describes a command.\n");
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
    for (const std::string &dir : search_dirs()) {
        std::string path = dir + "/xmem-" + command;
        if (!is_executable_file(path))
            continue;
        std::vector<char *> args;
        std::string name = "xmem-" + command;
        args.push_back(name.data());
        for (int i = 2; i < argc; ++i)
            args.push_back(argv[i]);
        args.push_back(nullptr);
        execv(path.c_str(), args.data());
        std::fprintf(stderr, "xmem: cannot run %s: %s\n", path.c_str(), std::strerror(errno));
        return 126;
    }
    std::fprintf(stderr, "xmem: unknown command '%s' (run 'xmem --help' for the list)\n",
                 command.c_str());
    return k_exit_usage;
}
