// report_sacct.cpp — the jobs of the whole cluster from Slurm's accounting: `sacct` lists
// every job of the window with its AdminComment, where the node wrote xmem's record at the
// job's end (accounting_record.h); the record carries what the ledger row holds, so both
// sources give the same report on the same jobs. User, account and partition are sacct's
// (slurmctld's, as the node's job end read them for the ledger).
#include "report.h"

#include "accounting_record.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

namespace xmem::report
{

namespace
{
constexpr int k_sacct_deadline_ms = 120000; // a large cluster's window can take a while
constexpr std::size_t k_capture_max_bytes = 1ull << 30;

std::string sacct_time(int64_t ts)
{
    char buf[32];
    time_t t = (time_t)ts;
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
    return buf;
}

} // namespace

std::string run_capture(const std::vector<std::string> &args, std::string &out, int deadline_ms,
                        const std::string &missing, const std::string &failed)
{
    std::vector<char *> argv;
    for (const auto &a : args)
        argv.push_back(const_cast<char *>(a.c_str()));
    argv.push_back(nullptr);
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) < 0)
        return "cannot run " + args[0] + ": " + strerror(errno);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
    pid_t pid;
    int rc = posix_spawnp(&pid, argv[0], &fa, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fds[1]);
    if (rc != 0) {
        close(fds[0]);
        return "cannot run " + args[0] + ": " + strerror(rc) + " (" + missing + ")";
    }
    struct timespec start;
    clock_gettime(CLOCK_MONOTONIC, &start);
    std::string why;
    char buf[65536];
    for (;;) {
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        long left = deadline_ms -
                    ((now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000);
        struct pollfd p = {fds[0], POLLIN, 0};
        if (left <= 0 || poll(&p, 1, (int)left) == 0) {
            why = args[0] + " did not answer within " + std::to_string(deadline_ms / 1000) + " s";
            kill(pid, SIGKILL);
            break;
        }
        ssize_t n = read(fds[0], buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        out.append(buf, (std::size_t)n);
        if (out.size() > k_capture_max_bytes) {
            why = args[0] + " printed more than 1 GiB; narrow the window (--since, --until)";
            kill(pid, SIGKILL);
            break;
        }
    }
    close(fds[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (why.empty() && !(WIFEXITED(status) && WEXITSTATUS(status) == 0))
        why = args[0] + " failed (" + failed + ")";
    return why;
}

namespace
{
// Splits a line on '|' into at most n fields, the last taking the rest (an AdminComment
// may hold '|').
std::vector<std::string> fields(const std::string &line, std::size_t n)
{
    std::vector<std::string> f;
    std::size_t from = 0;
    while (f.size() + 1 < n) {
        std::size_t bar = line.find('|', from);
        if (bar == std::string::npos)
            break;
        f.push_back(line.substr(from, bar - from));
        from = bar + 1;
    }
    f.push_back(line.substr(from));
    return f;
}
} // namespace

std::vector<JobRecord> parse_sacct(const std::string &out,
                                   const std::function<uint64_t(const std::string &)> &capacity)
{
    std::vector<JobRecord> jobs;
    std::size_t from = 0;
    while (from < out.size()) {
        std::size_t nl = out.find('\n', from);
        std::string line =
            out.substr(from, nl == std::string::npos ? std::string::npos : nl - from);
        from = nl == std::string::npos ? out.size() : nl + 1;
        auto f = fields(line, 5);
        if (f.size() != 5 || f[0].empty() ||
            f[0].find_first_not_of("0123456789") != std::string::npos)
            continue; // not one job's line (array steps, headers)
        auto rec = xmem::server::accounting_record_find(f[4]);
        if (!rec)
            continue; // not an --xmem job, or its end was not recorded
        JobRecord j;
        j.ts = rec->ts;
        j.job_id = std::stoull(f[0]);
        j.user = f[1];
        j.account = f[2];
        j.partition = f[3];
        j.gpu = rec->gpu;
        j.estimate_bytes = rec->estimate_bytes.value_or(0);
        j.limit_bytes = rec->limit_bytes.value_or(0);
        j.capacity_bytes = capacity(j.gpu);
        j.eligible = rec->estimated && !rec->check_only;
        j.packed = is_packed(rec->estimated, rec->check_only, j.limit_bytes, j.capacity_bytes);
        j.measured_bytes = rec->measured_bytes;
        j.exit_status = rec->exit_status;
        j.elapsed_seconds = rec->elapsed_seconds;
        j.cuda_oom = rec->cuda_oom;
        j.enforcement = rec->enforcement.value_or("");
        j.oom_requeued = rec->oom_requeued;
        j.gpu_fraction = rec->gpu_fraction;
        if (rec->estimated && j.capacity_bytes == 0)
            j.defect = "GPU '" + j.gpu + "' is not in the GPU catalog";
        jobs.push_back(std::move(j));
    }
    std::sort(jobs.begin(), jobs.end(),
              [](const JobRecord &a, const JobRecord &b) { return a.ts < b.ts; });
    return jobs;
}

xmem::Result<void> load_sacct_jobs(const Options &opt, const xmem::analysis::Catalog &catalog,
                                   std::vector<JobRecord> &jobs)
{
    // sacct's window is on the jobs' times; the report's is on the record's (its end), which
    // build_report applies to both sources alike.
    std::vector<std::string> args = {
        opt.sacct,
        "--allusers",
        "--allocations",
        "--noheader",
        "--parsable2",
        "--format=JobIDRaw,User,Account,Partition,AdminComment",
        "--starttime=" + (opt.since ? sacct_time(*opt.since) : std::string("1970-01-02")),
        "--endtime=" + (opt.until ? sacct_time(*opt.until) : std::string("now"))};
    std::string out;
    std::string why = run_capture(args, out, k_sacct_deadline_ms, "give --sacct PATH",
                                  "is accounting_storage/slurmdbd configured? see its stderr");
    if (!why.empty())
        return xmem::Result<void>::fail("xmem: report: " + why);
    std::map<std::string, uint64_t> known;
    jobs = parse_sacct(out, [&](const std::string &gpu) { return capacity(catalog, gpu, known); });
    return xmem::Result<void>::success();
}

} // namespace xmem::report
