// cache_key.cpp — hash everything that can change an estimate, including sibling modules.
#include "cache_key.h"
#include "sha256.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <mutex>
#include <set>
#include <unordered_map>
#include <sys/stat.h>
#include <unistd.h>

namespace xmem::server
{

namespace
{

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

// What the kernel says about a file's identity and version. A write or truncate changes
// mtime and ctime, and chmod, chown, rename-over and utimensat change ctime, so an equal
// stamp means equal content, provided the last change is older than the timestamp
// granularity (see settled()).
struct FileStamp {
    dev_t dev = 0;
    ino_t ino = 0;
    off_t size = 0;
    int64_t mtime_ns = 0, ctime_ns = 0;
    bool operator==(const FileStamp &o) const
    {
        return dev == o.dev && ino == o.ino && size == o.size && mtime_ns == o.mtime_ns &&
               ctime_ns == o.ctime_ns;
    }
};

// A file's digest and the modules it imports: what the key needs from its content.
struct FileFacts {
    FileStamp stamp;
    std::string digest; // SHA-256 hex of the content
    std::vector<std::string> imports;
};

// A change within the same timestamp tick as the one we saw would leave the stamp equal
// ("racy clean" in git's terms), so only a file unchanged for this long is remembered.
// Coarse kernel clocks tick in milliseconds; 2 s also covers filesystems that keep seconds.
constexpr int64_t k_settle_ns = 2'000'000'000;
// Bound on remembered files: flat memory; scripts and helpers on one login node are few.
constexpr std::size_t k_max_remembered = 4096;

std::mutex g_facts_mutex;
std::unordered_map<std::string, FileFacts> g_facts; // by path, as the request named it
std::atomic<uint64_t> g_files_hashed{0};

int64_t ns_of(const struct timespec &t)
{
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

bool settled(const FileStamp &s)
{
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    return ns_of(now) - std::max(s.mtime_ns, s.ctime_ns) > k_settle_ns;
}

// The facts of a regular file; errno-style error on failure. The file is always opened, with
// the calling thread's filesystem identity: that checks the caller may read it (and on NFS
// revalidates its attributes, close-to-open), even when its content need not be read again.
int file_facts(const std::string &path, FileFacts &out)
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
    FileStamp stamp;
    stamp.dev = st.st_dev;
    stamp.ino = st.st_ino;
    stamp.size = st.st_size;
    stamp.mtime_ns = ns_of(st.st_mtim);
    stamp.ctime_ns = ns_of(st.st_ctim);
    {
        std::lock_guard<std::mutex> lock(g_facts_mutex);
        auto it = g_facts.find(path);
        if (it != g_facts.end() && it->second.stamp == stamp) {
            out = it->second;
            close(fd);
            return 0;
        }
    }
    std::string text((std::size_t)st.st_size, '\0');
    std::size_t got = 0;
    while (got < text.size()) {
        ssize_t n = read(fd, &text[got], text.size() - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        got += (std::size_t)n;
    }
    text.resize(got);
    close(fd);
    out.stamp = stamp;
    out.digest = sha256_hex(text);
    out.imports = python_imports(text);
    g_files_hashed++;
    if (got == (std::size_t)st.st_size && settled(stamp)) {
        std::lock_guard<std::mutex> lock(g_facts_mutex);
        if (g_facts.size() >= k_max_remembered)
            g_facts.clear();
        g_facts[path] = out;
    }
    return 0;
}

bool is_ident_char(char c)
{
    return isalnum((unsigned char)c) || c == '_';
}

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
                std::string item =
                    rest.substr(p, comma == std::string::npos ? std::string::npos : comma - p);
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
    h.field("xmem-cache-key v2"); // v2: file digests instead of contents
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
    h.field(std::to_string(in.steps));

    std::string script = entrypoint_script(in.argv, in.cwd);
    if (script.empty())
        return Result<std::string>::ok(h.hex());
    FileFacts facts;
    int e = file_facts(script, facts);
    if (e != 0)
        return Result<std::string>::fail("xmem: cannot read the entrypoint " + script + ": " +
                                         strerror(e) + " (it must be a file you can read)");
    h.field(script);
    h.field(facts.digest);
    // Sibling modules, transitively, each once, in discovery order (deterministic).
    std::string dir = dirname_of(script);
    std::set<std::string> seen;
    std::vector<std::string> todo = facts.imports;
    for (std::size_t i = 0; i < todo.size() && seen.size() < k_max_module_files; i++) {
        if (!seen.insert(todo[i]).second)
            continue;
        FileFacts mod;
        std::string file = join(dir, todo[i] + ".py");
        if (file_facts(file, mod) != 0) {
            file = join(dir, todo[i] + "/__init__.py");
            if (file_facts(file, mod) != 0)
                continue; // not local: stdlib or site-packages, covered by env and torch
        }
        h.field(file);
        h.field(mod.digest);
        for (auto &m : mod.imports)
            todo.push_back(m);
    }
    return Result<std::string>::ok(h.hex());
}

uint64_t cache_key_files_hashed()
{
    return g_files_hashed.load();
}

} // namespace xmem::server
