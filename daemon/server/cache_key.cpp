// cache_key.cpp — hash everything that can change an estimate, including sibling modules.
#include "cache_key.h"
#include "defaults.h"
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

// Remembered facts are keyed by the file's identity (device, inode), never by the path as
// spelled: ./f.py, ././f.py and a symlink to it are one entry, so a request cannot grow the
// memo by respelling a path. The stamp still guards the content.
struct FileId {
    dev_t dev;
    ino_t ino;
    bool operator==(const FileId &o) const { return dev == o.dev && ino == o.ino; }
};
struct FileIdHash {
    std::size_t operator()(const FileId &f) const
    {
        return std::hash<uint64_t>()((uint64_t)f.dev * 0x9e3779b97f4a7c15ull ^ (uint64_t)f.ino);
    }
};

std::mutex g_facts_mutex;
std::unordered_map<FileId, FileFacts, FileIdHash> g_facts;
std::size_t g_facts_bytes = 0; // what g_facts holds, by facts_bytes()
std::atomic<uint64_t> g_files_hashed{0};

std::size_t facts_bytes(const FileFacts &f)
{
    std::size_t n = sizeof(FileId) + sizeof(FileFacts) + f.digest.size();
    for (const auto &m : f.imports)
        n += sizeof(std::string) + m.size();
    return n;
}

// Evicts everything when an entry would overflow either bound: the memo is a speed-up, and
// refilling it costs one hash per file, which the per-request byte bound already limits.
void remember(const FileId &id, const FileFacts &f)
{
    std::size_t add = facts_bytes(f);
    std::lock_guard<std::mutex> lock(g_facts_mutex);
    auto it = g_facts.find(id);
    if (it != g_facts.end()) {
        g_facts_bytes -= facts_bytes(it->second);
        g_facts.erase(it);
    }
    if (g_facts.size() >= k_key_memo_max_files || g_facts_bytes + add > k_key_memo_max_bytes) {
        g_facts.clear();
        g_facts_bytes = 0;
    }
    g_facts.emplace(id, f);
    g_facts_bytes += add;
}

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
// `budget` is what this request may still hash, in bytes: every file counts by its size,
// remembered or not, so whether a request fits does not depend on what others asked before.
int file_facts(const std::string &path, FileFacts &out, std::size_t &budget)
{
    int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0)
        return errno;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return S_ISDIR(st.st_mode) ? EISDIR : EINVAL;
    }
    if ((std::size_t)st.st_size > k_key_max_file_bytes || (std::size_t)st.st_size > budget) {
        close(fd);
        return EFBIG;
    }
    budget -= (std::size_t)st.st_size;
    FileStamp stamp;
    stamp.dev = st.st_dev;
    stamp.ino = st.st_ino;
    stamp.size = st.st_size;
    stamp.mtime_ns = ns_of(st.st_mtim);
    stamp.ctime_ns = ns_of(st.st_ctim);
    {
        std::lock_guard<std::mutex> lock(g_facts_mutex);
        auto it = g_facts.find(FileId{st.st_dev, st.st_ino});
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
    if (got == (std::size_t)st.st_size && settled(stamp))
        remember(FileId{st.st_dev, st.st_ino}, out);
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

Result<std::string> too_big(const std::string &file)
{
    return Result<std::string>::fail(
        "xmem: " + file + " takes the entrypoint and its local modules past " +
        std::to_string(k_key_max_request_bytes >> 20) + " MiB (or one file past " +
        std::to_string(k_key_max_file_bytes >> 20) +
        " MiB), more than xmemd hashes for one request; keep data out of .py files beside the "
        "script");
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
    std::set<std::string> seen;
    // Each name once, and no more than the key follows: a file of "import a,a,a,..." must
    // not cost memory per mention (4 MiB of it once took 65 MiB per request).
    auto add = [&](std::string m) {
        if (!m.empty() && m.size() <= k_key_max_module_name &&
            mods.size() < k_key_max_module_files && seen.insert(m).second)
            mods.push_back(std::move(m));
    };
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
                if (s != std::string::npos)
                    add(first_component(item.substr(s)));
                if (comma == std::string::npos)
                    break;
                p = comma + 1;
            }
        } else if (line.rfind("from ", 0) == 0) {
            std::string rest = line.substr(5);
            auto s = rest.find_first_not_of(" \t");
            if (s != std::string::npos)
                add(first_component(rest.substr(s)));
        }
    }
    return mods;
}

Result<std::string> cache_key(const KeyInputs &in)
{
    Sha256 h;
    h.field("xmem-cache-key v4"); // v3: the requesting uid; v4: the preamble
    h.field(XMEM_VERSION);
    // The uid, not an attempt to hash everything of the user's that can change the result:
    // a user's usercustomize.py, ~/.local site-packages, .pth files and whatever they import
    // change what the same script allocates, and no bounded list of files covers them all.
    // So one user's estimate is never served to another (docs/protocol.md, "Cache").
    h.field(std::to_string(in.uid));
    h.field(in.config_fingerprint);
    h.field(std::to_string(in.argv.size()));
    for (const auto &a : in.argv)
        h.field(a);
    h.field(in.cwd);
    for (const auto &[k, v] : in.env) {
        h.field(k);
        h.field(v);
    }
    // The preamble decides the interpreter and libraries as much as PATH does (two jobs
    // that activate different venvs must not share an estimate).
    h.field(std::to_string(in.preamble.size()));
    for (const auto &[line, text] : in.preamble) {
        h.field(std::to_string(line));
        h.field(text);
    }
    h.field(in.gpu);
    h.field(in.torch);
    h.field(std::to_string(in.steps));
    if (in.world > 1) // a single-rank key stays what it was, so old entries still hit
        h.field("world " + std::to_string(in.world));

    std::string script = entrypoint_script(in.argv, in.cwd);
    if (script.empty())
        return Result<std::string>::ok(h.hex());
    FileFacts facts;
    std::size_t budget = k_key_max_request_bytes;
    int e = file_facts(script, facts, budget);
    if (e == EFBIG)
        return too_big(script);
    if (e != 0 && in.preamble_changes_dir) {
        static std::atomic<uint64_t> unique{0};
        h.field("not cached: the entrypoint is where the preamble cd'd");
        h.field(std::to_string(getpid()) + "." + std::to_string(time(nullptr)) + "." +
                std::to_string(unique.fetch_add(1)));
        return Result<std::string>::ok(h.hex());
    }
    if (e != 0)
        return Result<std::string>::fail("xmem: cannot read the entrypoint " + script + ": " +
                                         strerror(e) + " (it must be a file you can read)");
    h.field(script);
    h.field(facts.digest);
    // Sibling modules, transitively, each once, in discovery order (deterministic).
    std::string dir = dirname_of(script);
    std::set<std::string> seen;
    std::vector<std::string> todo = facts.imports;
    for (std::size_t i = 0; i < todo.size() && seen.size() < k_key_max_module_files; i++) {
        if (!seen.insert(todo[i]).second)
            continue;
        FileFacts mod;
        std::string file = join(dir, todo[i] + ".py");
        int me = file_facts(file, mod, budget);
        if (me != 0 && me != EFBIG) {
            file = join(dir, todo[i] + "/__init__.py");
            me = file_facts(file, mod, budget);
        }
        // A local module too big to hash must not be skipped: the key would then ignore it,
        // and an edited module would be answered from the cache.
        if (me == EFBIG)
            return too_big(file);
        if (me != 0)
            continue; // not local: stdlib or site-packages, covered by env and torch
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

std::size_t cache_key_memo_bytes()
{
    std::lock_guard<std::mutex> lock(g_facts_mutex);
    return g_facts_bytes;
}

} // namespace xmem::server
