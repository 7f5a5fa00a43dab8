// cache_key.cpp — hash everything that can change an estimate, including sibling modules.
#include "cache_key.h"
#include "sha256.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <set>
#include <sys/stat.h>
#include <unistd.h>

namespace xmemd {

namespace {

// Bounds on what the key reads: a training script and its helpers are small; a "module" of
// megabytes is data, and hashing it would let one request stall a worker thread.
constexpr std::size_t k_max_module_files = 64;
constexpr std::size_t k_max_file_bytes = 4u << 20;

bool ends_with(const std::string &s, const char *suffix)
{
    std::size_t n = strlen(suffix);
    return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

std::string join(const std::string &dir, const std::string &p)
{
    if (!p.empty() && p[0] == '/')
        return p;
    return dir.empty() || dir.back() == '/' ? dir + p : dir + "/" + p;
}

std::string dirname_of(const std::string &p)
{
    auto slash = p.rfind('/');
    return slash == std::string::npos ? "." : (slash == 0 ? "/" : p.substr(0, slash));
}

// Reads a regular file; errno-style error on failure.
int read_file(const std::string &path, std::string &out)
{
    int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0)
        return errno;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return S_ISDIR(st.st_mode) ? EISDIR : EINVAL;
    }
    if ((std::size_t)st.st_size > k_max_file_bytes) {
        close(fd);
        return EFBIG;
    }
    out.resize((std::size_t)st.st_size);
    std::size_t got = 0;
    while (got < out.size()) {
        ssize_t n = read(fd, &out[got], out.size() - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        got += (std::size_t)n;
    }
    out.resize(got);
    close(fd);
    return 0;
}

bool is_ident_char(char c) { return isalnum((unsigned char)c) || c == '_'; }

std::string first_component(const std::string &dotted)
{
    std::size_t i = 0;
    while (i < dotted.size() && dotted[i] == '.')
        i++;
    std::size_t j = i;
    while (j < dotted.size() && is_ident_char(dotted[j]))
        j++;
    return dotted.substr(i, j - i);
}

} // namespace

std::string entrypoint_script(const std::vector<std::string> &argv, const std::string &cwd)
{
    for (std::size_t i = 0; i < argv.size(); i++)
        if (ends_with(argv[i], ".py"))
            return join(cwd, argv[i]);
    if (!argv.empty() && argv[0].find('/') != std::string::npos)
        return join(cwd, argv[0]);
    return "";
}

std::vector<std::string> python_imports(const std::string &src)
{
    std::vector<std::string> mods;
    std::size_t pos = 0;
    while (pos < src.size()) {
        std::size_t eol = src.find('\n', pos);
        if (eol == std::string::npos)
            eol = src.size();
        std::string line = src.substr(pos, eol - pos);
        pos = eol + 1;
        std::size_t i = line.find_first_not_of(" \t");
        if (i == std::string::npos)
            continue;
        line = line.substr(i);
        auto hash = line.find('#');
        if (hash != std::string::npos)
            line = line.substr(0, hash);
        if (line.rfind("import ", 0) == 0) {
            std::string rest = line.substr(7);
            std::size_t p = 0;
            while (p < rest.size()) {
                std::size_t comma = rest.find(',', p);
                std::string item = rest.substr(p, comma == std::string::npos ? std::string::npos
                                                                             : comma - p);
                auto s = item.find_first_not_of(" \t(");
                if (s != std::string::npos) {
                    std::string m = first_component(item.substr(s));
                    if (!m.empty())
                        mods.push_back(m);
                }
                if (comma == std::string::npos)
                    break;
                p = comma + 1;
            }
        } else if (line.rfind("from ", 0) == 0) {
            std::string rest = line.substr(5);
            auto s = rest.find_first_not_of(" \t");
            if (s != std::string::npos) {
                std::string m = first_component(rest.substr(s));
                if (!m.empty())
                    mods.push_back(m);
            }
        }
    }
    return mods;
}

Result<std::string> cache_key(const KeyInputs &in)
{
    Sha256 h;
    h.field("xmem-cache-key v1");
    h.field(XMEM_VERSION);
    h.field(in.config_fingerprint);
    h.field(std::to_string(in.argv.size()));
    for (const auto &a : in.argv)
        h.field(a);
    h.field(in.cwd);
    for (const auto &[k, v] : in.env) {
        h.field(k);
        h.field(v);
    }
    h.field(in.gpu);
    h.field(in.torch);
    h.field(std::to_string(in.iterations));

    std::string script = entrypoint_script(in.argv, in.cwd);
    if (script.empty())
        return Result<std::string>::ok(h.hex());
    std::string text;
    int e = read_file(script, text);
    if (e != 0)
        return Result<std::string>::failure("xmem: cannot read the entrypoint " + script + ": " +
                                         strerror(e) + " (it must be a file you can read)");
    h.field(script);
    h.field(text);
    // Sibling modules, transitively, each once, in discovery order (deterministic).
    std::string dir = dirname_of(script);
    std::set<std::string> seen;
    std::vector<std::string> todo = python_imports(text);
    for (std::size_t i = 0; i < todo.size() && seen.size() < k_max_module_files; i++) {
        if (!seen.insert(todo[i]).second)
            continue;
        std::string body;
        std::string file = join(dir, todo[i] + ".py");
        if (read_file(file, body) != 0) {
            file = join(dir, todo[i] + "/__init__.py");
            if (read_file(file, body) != 0)
                continue; // not local: stdlib or site-packages, covered by env and torch
        }
        h.field(file);
        h.field(body);
        for (auto &m : python_imports(body))
            todo.push_back(m);
    }
    return Result<std::string>::ok(h.hex());
}

} // namespace xmemd
