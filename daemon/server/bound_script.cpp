// bound_script.cpp — reads the batch script a decision is bound to, and checks that the
// request profiles what it runs.
#include "bound_script.h"
#include "defaults.h"
#include "sha256.h"
#include "xmem_script.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <memory>
#include <sys/stat.h>
#include <unistd.h>

namespace xmem::server
{

namespace
{

Result<std::string> read_file(const std::string &full)
{
    // O_NONBLOCK: a FIFO named as the script must not hang a worker thread.
    int fd = open(full.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0)
        return Result<std::string>::fail("xmem: cannot read the batch script " + full + ": " +
                                         strerror(errno));
    struct stat st;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
        (uint64_t)st.st_size > k_decision_max_script_bytes) {
        close(fd);
        return Result<std::string>::fail(
            "xmem: the batch script " + full + " is not a regular file of at most " +
            std::to_string(k_decision_max_script_bytes >> 20) + " MiB");
    }
    std::string text;
    char buf[65536];
    ssize_t n;
    while ((n = read(fd, buf, sizeof(buf))) != 0) {
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 || text.size() + (uint64_t)n > k_decision_max_script_bytes)
            break;
        text.append(buf, (size_t)n);
    }
    close(fd);
    if (n != 0)
        return Result<std::string>::fail("xmem: cannot read the batch script " + full +
                                         " whole (it changed or grew while being read)");
    return Result<std::string>::ok(std::move(text));
}

std::vector<std::string> words(char *const *argv)
{
    std::vector<std::string> out;
    for (; argv != nullptr && *argv != nullptr; argv++)
        out.emplace_back(*argv);
    return out;
}

bool same_lines(const xmem_preamble &pre, const std::vector<ScriptLine> &lines)
{
    if ((size_t)pre.nkept != lines.size())
        return false;
    for (int i = 0; i < pre.nkept; i++)
        if (pre.kept[i].line != lines[i].line || lines[i].text != pre.kept[i].text)
            return false;
    return true;
}

const char *k_fix =
    " (submit with sbatch --xmem; if you did, the plugin and xmemd are of different "
    "versions: update both)";

} // namespace

std::string shown_argv(const std::vector<std::string> &argv)
{
    std::string s;
    for (const auto &a : argv) {
        s += (s.empty() ? "" : " ") + a.substr(0, k_status_argv_bytes);
        if (s.size() >= k_status_argv_bytes)
            break;
    }
    if (s.size() > k_status_argv_bytes)
        s = s.substr(0, k_status_argv_bytes) + "...";
    for (char &c : s)
        if ((unsigned char)c < 0x20 || c == 0x7f)
            c = '?';
    return s;
}

Result<BoundScript> bound_script_read(const std::string &script, const std::string &wrap,
                                      const std::string &cwd)
{
    BoundScript s;
    if (!wrap.empty()) {
        std::unique_ptr<char, decltype(&free)> text(xmem_wrap_script(wrap.c_str()), free);
        if (!text)
            return Result<BoundScript>::fail("xmem: out of memory building the --wrap script");
        s.name = "the --wrap command";
        s.text = text.get();
    } else if (!script.empty()) {
        s.name = script[0] == '/' ? script : cwd + "/" + script;
        auto text = read_file(s.name);
        if (!text)
            return Result<BoundScript>::fail(text.error().message);
        s.text = std::move(text).value();
    } else {
        s.sha256 = "-";
        return Result<BoundScript>::ok(std::move(s));
    }
    Sha256 h;
    h.update(s.text.data(), s.text.size());
    s.sha256 = h.hex();
    return Result<BoundScript>::ok(std::move(s));
}

std::optional<std::string> bound_script_mismatch(const BoundScript &s,
                                                 const std::vector<std::string> &argv,
                                                 const std::vector<ScriptLine> &preamble)
{
    if (s.name.empty())
        return std::nullopt;
    // The plugin read the file as a C string: so does this, whatever follows a NUL byte.
    xmem_script_job job;
    if (xmem_script_job_find(s.text.c_str(), &job) < 0)
        return "xmem: " + s.name + " names no training entrypoint, but the request profiles '" +
               shown_argv(argv) + "'" + k_fix;
    std::vector<std::string> entry = words(job.entry);
    bool same_preamble = same_lines(job.pre, preamble);
    int line = job.line;
    xmem_script_job_free(&job);
    if (entry != argv)
        return "xmem: the request profiles '" + shown_argv(argv) + "', but " + s.name + " runs '" +
               shown_argv(entry) + "' (line " + std::to_string(line) + ")" + k_fix;
    if (!same_preamble)
        return "xmem: the request's preamble is not the environment lines " + s.name +
               " has before line " + std::to_string(line) + k_fix;
    return std::nullopt;
}

} // namespace xmem::server
