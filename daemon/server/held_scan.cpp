// held_scan.cpp — the scan of held jobs, on a worker thread (held_jobs.h): list the marked
// jobs from the controller, then narrow or release each with `scontrol update`, as root.
// job_submit.lua's slurm_job_modify believes the update only from uid 0 and, for a narrowing,
// only with xmemd's MUNGE signature over this job's id and request id (docs/async.md).
#include "held_jobs.h"

#include "log.h"
#include "slurm_command.h"

#include <cctype>
#include <ctime>
#include <regex>

namespace xmem::server
{

namespace
{

// The most of a listing kept: every pending job of a large site, with its AdminComment.
constexpr std::size_t k_listing_max = 64u << 20;

// A reason as one printable line, bounded: it becomes an AdminComment and a job's output line.
std::string one_line(const std::string &s)
{
    std::string out;
    for (char c : s.substr(0, 300))
        out += isprint((unsigned char)c) ? c : ' ';
    return out;
}

bool update_job(uint32_t job_id, const std::string &admin_comment)
{
    int rc = slurm_command(
        {"scontrol", "update", "JobId=" + std::to_string(job_id), "AdminComment=" + admin_comment},
        nullptr, 0);
    if (rc != 0)
        log_warn("held job %u: scontrol update failed (exit %d)", job_id, rc);
    return rc == 0;
}

} // namespace

std::vector<MarkedJob> held_parse_listing(const std::string &listing)
{
    // One "JOBID/ADMINCOMMENT" line per pending job (squeue -O, as the plugin reads a record:
    // no job name or comment can look like the AdminComment). Only job_submit.lua writes it.
    static const std::regex line_re("^([0-9]+)/xmem: estimating id=([0-9]+) uid=([0-9]+) .*");
    std::vector<MarkedJob> out;
    std::size_t start = 0;
    while (start < listing.size()) {
        std::size_t end = listing.find('\n', start);
        if (end == std::string::npos)
            end = listing.size();
        std::string line = listing.substr(start, end - start);
        start = end + 1;
        std::smatch m;
        if (!std::regex_match(line, m, line_re))
            continue;
        MarkedJob j;
        j.job_id = (uint32_t)std::stoul(m[1].str());
        j.request_id = std::stoull(m[2].str());
        j.uid = (uid_t)std::stoul(m[3].str());
        out.push_back(j);
    }
    return out;
}

std::string held_action(const MarkedJob &job, const std::map<uint64_t, HeldEntry> &book,
                        const Config &cfg, bool at_start)
{
    auto it = book.find(job.request_id);
    // At start every held job is an earlier xmemd's; later, an unknown one may be a job whose
    // id was booked after this scan's snapshot: the deadline releases a forged one.
    if (it == book.end())
        return at_start ? "xmem-release xmemd restarted and has no estimate for this job; it "
                          "keeps its original request"
                        : "";
    const HeldEntry &e = it->second;
    if (e.uid != job.uid)
        return "xmem-release the estimate it names is another user's; the job keeps its "
               "original request";
    if (!e.finished)
        return "";
    if (!e.decision)
        return "xmem-release " + one_line(e.why);
    Decision d = *e.decision;
    d.job_id = job.job_id;
    d.expires = time(nullptr) + cfg.policy.decision_ttl_seconds;
    auto cred = munge_sign(decision_payload(d), cfg.munge_socket, cfg.policy.decision_ttl_seconds);
    if (!cred)
        return "xmem-release the decision could not be signed (" + one_line(cred.error().message) +
               "); the job keeps its original request";
    return "xmem-decision " + cred.value();
}

void HeldJobs::scan_work(uv_work_t *w)
{
    auto *self = static_cast<HeldJobs *>(w->data);
    std::string listing;
    int rc = slurm_command({"squeue", "-h", "-t", "PD", "-O", "jobid:0/,admin_comment:0"}, &listing,
                           k_listing_max);
    self->m_scan_ok = rc == 0;
    if (rc != 0) {
        log_warn_throttled("held-scan", "cannot list held jobs: squeue exited %d", rc);
        return;
    }
    for (const MarkedJob &job : held_parse_listing(listing)) {
        std::string action =
            held_action(job, self->m_snapshot, *self->m_scan_config, !self->m_started_scan_done);
        if (action.empty())
            continue;
        log_info("held job %u (request %llu): %s", job.job_id, (unsigned long long)job.request_id,
                 action.substr(0, 80).c_str());
        if (update_job(job.job_id, action) && self->m_snapshot.count(job.request_id))
            self->m_applied.push_back(job.request_id);
    }
}

} // namespace xmem::server
