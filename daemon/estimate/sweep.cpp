#include "sweep.h"

#include "trace/units.h"
#include "zygote.h"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <map>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

namespace xmem::estimate
{

namespace
{

bool whole_number(const std::string &s, uint64_t &out)
{
    if (s.empty() || s.size() > 12 || s.find_first_not_of("0123456789") != std::string::npos)
        return false;
    out = std::strtoull(s.c_str(), nullptr, 10);
    return true;
}

std::vector<std::string> split(const std::string &s, char sep)
{
    std::vector<std::string> out;
    size_t start = 0;
    for (size_t at; (at = s.find(sep, start)) != std::string::npos; start = at + 1)
        out.push_back(s.substr(start, at - start));
    out.push_back(s.substr(start));
    return out;
}

// The child's command line: this executable, the parent's options that shape an estimate,
// --json, then the command with its value.
std::vector<std::string> child_argv(const EstimateOptions &o, const std::string &self,
                                    const std::vector<std::string> &command)
{
    std::vector<std::string> a = {self,     "--gpu", o.gpu,   "--steps", std::to_string(o.steps),
                                  "--mode", o.mode,  "--json"};
    auto add = [&a](const char *name, const std::string &v) {
        if (!v.empty()) {
            a.emplace_back(name);
            a.push_back(v);
        }
    };
    auto count = [](unsigned n) { return n ? std::to_string(n) : std::string(); };
    add("--torch", o.torch.value_or(""));
    if (o.alloc_conf)
        a.insert(a.end(), {"--alloc-conf", *o.alloc_conf});
    add("--catalog", o.catalog);
    add("--threads", count(o.threads));
    add("--timeout", count(o.timeout_seconds));
    add("--budget", count(o.budget_seconds));
    add("--max-rss", count(o.max_rss_mib));
    if (o.margin)
        add("--margin", std::to_string(*o.margin));
    a.emplace_back("--");
    a.insert(a.end(), command.begin(), command.end());
    return a;
}

std::string self_path()
{
    char buf[4096];
    ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
    return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string("xmem-estimate");
}

// One child estimate in flight: its stdout and stderr go to unlinked temporary files.
struct Child {
    pid_t pid = -1;
    int out = -1, err = -1;
    size_t index = 0;
};

int temp_fd()
{
    const char *dir = std::getenv("TMPDIR");
    std::string path = std::string(dir && *dir ? dir : "/tmp") + "/xmem-sweep.XXXXXX";
    int fd = mkstemp(path.data());
    if (fd >= 0)
        unlink(path.c_str());
    return fd;
}

std::string read_all(int fd)
{
    std::string s;
    char buf[8192];
    lseek(fd, 0, SEEK_SET);
    for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;)
        s.append(buf, static_cast<size_t>(n));
    close(fd);
    return s;
}

Result<Child> start(const std::vector<std::string> &argv, size_t index)
{
    Child c;
    c.index = index;
    c.out = temp_fd();
    c.err = temp_fd();
    if (c.out < 0 || c.err < 0)
        return Result<Child>::fail(std::string("xmem: --sweep: cannot make a temporary file: ") +
                                   std::strerror(errno) + " (check TMPDIR)");
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, c.out, STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&fa, c.err, STDERR_FILENO);
    std::vector<char *> args;
    for (const std::string &s : argv)
        args.push_back(const_cast<char *>(s.c_str()));
    args.push_back(nullptr);
    int rc = posix_spawn(&c.pid, argv[0].c_str(), &fa, nullptr, args.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0)
        return Result<Child>::fail("xmem: --sweep: cannot run " + argv[0] + ": " +
                                   std::strerror(rc));
    return Result<Child>::ok(c);
}

// Why a child failed, in one line: the first thing it said (the profiler's own line) and
// the last line it quoted of the job's stderr, which is the job's own reason. The closing
// "its message above says why" of a lone estimate points at lines a sweep does not show.
std::string reason(const std::string &err, const std::string &fallback)
{
    std::string first, quoted;
    for (const std::string &line : split(err, '\n')) {
        if (first.empty() && line.rfind("xmem: ", 0) == 0 && line.rfind("xmem: warning:", 0) != 0)
            first = line;
        if (line.rfind("  | ", 0) == 0)
            quoted = line.substr(4);
    }
    if (first.empty())
        return fallback;
    return quoted.empty() ? first : first + ": " + quoted;
}

// The child's JSON, or why it failed.
void finish(Child &c, int status, uint64_t fit_bytes, SweepPoint &p)
{
    std::string out = read_all(c.out), err = read_all(c.err);
    auto j = nlohmann::json::parse(out, nullptr, false);
    if (!j.is_discarded() && j.contains("error")) {
        p.error = reason(err, j["error"].get<std::string>());
    } else if (!j.is_discarded() && WIFEXITED(status) && WEXITSTATUS(status) == 0) {
        p.ok = true;
        p.peak_bytes = j.value("peak_bytes", uint64_t{0});
        p.limit_bytes = j.value("limit_bytes", uint64_t{0});
        p.fits = fit_bytes ? p.limit_bytes <= fit_bytes : j.value("fits", false);
    } else {
        size_t nl = err.find('\n');
        p.error = err.empty() ? "the estimate ended with status " + std::to_string(status)
                              : err.substr(0, nl);
    }
}

// Estimates VALUES, up to JOBS at once; the points keep the values' order.
Result<std::vector<SweepPoint>> estimate_all(const EstimateOptions &o, const SweepSpec &s,
                                             const std::vector<std::string> &values)
{
    std::vector<SweepPoint> points(values.size());
    std::map<pid_t, Child> running;
    std::string self = self_path();
    size_t next = 0;
    while (next < values.size() || !running.empty()) {
        while (next < values.size() && running.size() < o.sweep_jobs) {
            points[next].value = values[next];
            auto c = start(child_argv(o, self, with_value(o.command, s.arg, values[next])), next);
            if (!c.ok())
                return Result<std::vector<SweepPoint>>::fail(c.error());
            running[c.value().pid] = c.value();
            ++next;
        }
        int status = 0;
        pid_t pid = waitpid(-1, &status, 0);
        if (pid < 0 && errno == EINTR)
            continue;
        auto it = running.find(pid);
        if (it == running.end())
            continue;
        finish(it->second, status, o.fit_bytes, points[it->second.index]);
        running.erase(it);
    }
    return Result<std::vector<SweepPoint>>::ok(std::move(points));
}

// Binary search of [lo, hi] for the largest value that fits; every point estimated is kept.
Result<std::vector<SweepPoint>> search(const EstimateOptions &o, const SweepSpec &s)
{
    std::vector<SweepPoint> tried;
    auto fits = [&](uint64_t v) -> Result<bool> {
        auto p = estimate_all(o, s, {std::to_string(v)});
        if (!p.ok())
            return Result<bool>::fail(p.error());
        tried.push_back(p.value()[0]);
        return Result<bool>::ok(p.value()[0].fits);
    };
    uint64_t lo = s.lo, hi = s.hi;
    auto low = fits(lo);
    if (!low.ok())
        return Result<std::vector<SweepPoint>>::fail(low.error());
    if (low.value() && lo < hi) {
        auto high = fits(hi);
        if (!high.ok())
            return Result<std::vector<SweepPoint>>::fail(high.error());
        while (!high.value() && hi - lo > 1) { // invariant: lo fits, hi does not
            uint64_t mid = lo + (hi - lo) / 2;
            auto m = fits(mid);
            if (!m.ok())
                return Result<std::vector<SweepPoint>>::fail(m.error());
            (m.value() ? lo : hi) = mid;
        }
    }
    return Result<std::vector<SweepPoint>>::ok(std::move(tried));
}

// The largest value that fits: the last fitting point of a search, else the fitting point
// with the largest number (or the last fitting one, for values that are not numbers).
const SweepPoint *largest_fitting(const std::vector<SweepPoint> &points)
{
    const SweepPoint *best = nullptr;
    uint64_t best_n = 0;
    for (const SweepPoint &p : points) {
        uint64_t n = 0;
        if (!p.fits)
            continue;
        bool numeric = whole_number(p.value, n);
        if (!best || !numeric || n >= best_n) {
            best = &p;
            best_n = n;
        }
    }
    return best;
}

void print_text(const EstimateOptions &o, const SweepSpec &s, const std::vector<SweepPoint> &pts)
{
    std::string what = o.fit_bytes ? "its limit within " + trace::format_bytes(o.fit_bytes)
                                   : "its peak within the " + o.gpu;
    std::printf("xmem estimate --sweep %s on %s (fits: %s):\n", s.arg.c_str(), o.gpu.c_str(),
                what.c_str());
    for (const SweepPoint &p : pts) {
        std::string label = s.arg + "=" + p.value;
        if (!p.ok)
            std::printf("  %-22s failed: %s\n", label.c_str(), p.error.c_str());
        else
            std::printf("  %-22s peak %12s  limit %12s  %s\n", label.c_str(),
                        trace::format_bytes(p.peak_bytes).c_str(),
                        trace::format_bytes(p.limit_bytes).c_str(),
                        p.fits ? "fits" : "does not fit");
    }
    const SweepPoint *best = largest_fitting(pts);
    std::printf("largest that fits: %s\n",
                best ? (s.arg + "=" + best->value).c_str() : "none of the values");
}

void print_json(const EstimateOptions &o, const SweepSpec &s, const std::vector<SweepPoint> &pts,
                bool forked)
{
    nlohmann::json points = nlohmann::json::array();
    for (const SweepPoint &p : pts) {
        if (p.ok)
            points.push_back({{"value", p.value},
                              {"peak_bytes", p.peak_bytes},
                              {"limit_bytes", p.limit_bytes},
                              {"fits", p.fits}});
        else
            points.push_back({{"value", p.value}, {"error", p.error}});
    }
    const SweepPoint *best = largest_fitting(pts);
    nlohmann::json j = {{"sweep", s.arg},
                        {"gpu", o.gpu},
                        {"fit_bytes", o.fit_bytes ? nlohmann::json(o.fit_bytes) : nlohmann::json()},
                        {"search", s.interval},
                        {"forked", forked},
                        {"points", points},
                        {"largest_fitting", best ? nlohmann::json(best->value) : nlohmann::json()}};
    std::fputs((j.dump(2) + "\n").c_str(), stdout);
}

} // namespace

Result<SweepSpec> parse_sweep(const std::string &text)
{
    using R = Result<SweepSpec>;
    auto bad = [&text](const std::string &why) {
        return R::fail("xmem: --sweep " + text + ": " + why +
                       " (e.g. --sweep --batch-size=8,16,32 or --sweep --batch-size=1..512)");
    };
    size_t eq = text.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
        return bad("expected ARG=VALUES");
    SweepSpec s;
    s.arg = text.substr(0, eq);
    std::string values = text.substr(eq + 1);
    if (s.arg[0] != '-')
        return bad("the argument is not an option of the command");
    if (size_t dots = values.find(".."); dots != std::string::npos) {
        s.interval = true;
        if (!whole_number(values.substr(0, dots), s.lo) ||
            !whole_number(values.substr(dots + 2), s.hi) || s.lo > s.hi)
            return bad("an interval is two whole numbers, LO..HI, with LO <= HI");
        return R::ok(std::move(s));
    }
    s.values = split(values, ',');
    for (const std::string &v : s.values)
        if (v.empty())
            return bad("an empty value");
    return R::ok(std::move(s));
}

std::vector<std::string> with_value(const std::vector<std::string> &command, const std::string &arg,
                                    const std::string &value)
{
    std::vector<std::string> out = command;
    for (size_t i = 0; i < out.size(); ++i) {
        if (out[i] == arg && i + 1 < out.size()) {
            out[i + 1] = value;
            return out;
        }
        if (out[i].rfind(arg + "=", 0) == 0) {
            out[i] = arg + "=" + value;
            return out;
        }
    }
    out.push_back(arg + "=" + value);
    return out;
}

int run_sweep(const EstimateOptions &o)
{
    auto spec = parse_sweep(o.sweep);
    if (!spec.ok()) {
        std::fprintf(stderr, "%s\n", spec.error().message.c_str());
        return 2;
    }
    Zygote zygote;
    bool forked = start_zygote(
        o, {"--sweep", "each value imports torch itself (one estimate per value)"}, zygote);
    if (forked) // the values' estimates inherit it; their jobs hand themselves to the zygote
        setenv("XMEM_ZYGOTE_SOCKET", zygote.socket.c_str(), 1);
    auto points = spec.value().interval ? search(o, spec.value())
                                        : estimate_all(o, spec.value(), spec.value().values);
    unsetenv("XMEM_ZYGOTE_SOCKET");
    stop_zygote(zygote);
    if (!points.ok()) {
        std::fprintf(stderr, "%s\n", points.error().message.c_str());
        return 2;
    }
    if (o.json)
        print_json(o, spec.value(), points.value(), forked);
    else
        print_text(o, spec.value(), points.value());
    return 0;
}

} // namespace xmem::estimate
