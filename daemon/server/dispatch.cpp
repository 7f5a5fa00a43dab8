// dispatch.cpp — route a complete frame by type; answer status/stats/job_end here and hand
// estimates to estimate_request.cpp. Every refused frame gets a ledger row and a numbered outcome.
#include "calibration.h"
#include "daemon.h"
#include "defaults.h"
#include "json_fields.h"
#include "log.h"
#include "contract/enforcement.h"

#include <ctime>
#include <unistd.h>
#include <optional>

namespace xmem::server
{

void refuse_frame(Conn *c, Outcome o, const std::string &message)
{
    Daemon *d = c->d;
    d->metrics().count_outcome(o);
    RequestRow row;
    row.id = d->ledger().take_id();
    row.ts = time(nullptr);
    row.kind = "frame";
    row.uid = c->peer.uid;
    row.gid = c->peer.gid;
    row.pid = c->peer.pid;
    row.outcome = o;
    row.message = message;
    uv_read_stop(reinterpret_cast<uv_stream_t *>(&c->pipe));
    c->answered = true;
    // Answer at once (the ledger row is for the admin; the client gets no estimate anyway).
    conn_reply(c, outcome_reply(o, message));
    d->ledger().append(std::move(row), nullptr);
}

namespace
{

// A Slurm account or partition name (or an enforcement level) as slurmstepd saw it: optional
// (absent or null = NULL in the ledger), a string of at most 64 printable bytes, since it ends up
// in reports and HTML.
Result<std::optional<std::string>> slurm_name(const nlohmann::json &j, const char *key)
{
    using R = Result<std::optional<std::string>>;
    if (!j.contains(key) || j[key].is_null())
        return R::ok(std::nullopt);
    if (!j[key].is_string())
        return R::fail(std::string(key) + ": expected a string");
    std::string v = j[key].get<std::string>();
    if (v.empty())
        return R::ok(std::nullopt);
    if (v.size() > 64)
        return R::fail(std::string(key) + " is longer than 64 bytes");
    for (unsigned char ch : v)
        if (ch < 0x20 || ch == 0x7f)
            return R::fail(std::string(key) + " contains a control character");
    return R::ok(std::move(v));
}

// The share a packed job ran on, "shard:N" or "mps:N", and the part of one GPU it is (the
// node computes it from its GRES); both or neither. What is wrong, or nothing.
std::optional<std::string> packed_share(const nlohmann::json &j, JobRow &row)
{
    bool has_share = j.contains("share") && !j["share"].is_null();
    bool has_fraction = j.contains("gpu_fraction") && !j["gpu_fraction"].is_null();
    if (!has_share && !has_fraction)
        return std::nullopt;
    const char *expected = "share and gpu_fraction: expected \"shard:N\" or \"mps:N\" with a "
                           "number above 0 and at most 1";
    if (!has_share || !has_fraction || !j["share"].is_string() || !j["gpu_fraction"].is_number())
        return expected;
    std::string share = j["share"].get<std::string>();
    double fraction = j["gpu_fraction"].get<double>();
    std::size_t colon = share.find(':');
    std::string kind = share.substr(0, colon),
                count = colon == std::string::npos ? "" : share.substr(colon + 1);
    if ((kind != "shard" && kind != "mps") || count.empty() || count.size() > 6 ||
        count.find_first_not_of("0123456789") != std::string::npos || count[0] == '0' ||
        !(fraction > 0 && fraction <= 1))
        return expected;
    row.share = share;
    row.gpu_fraction = fraction;
    for (auto [key, into] : {std::pair{"packed_limit_bytes", &row.packed_limit_bytes},
                             std::pair{"packed_estimate_bytes", &row.packed_estimate_bytes}}) {
        if (!j.contains(key) || j[key].is_null())
            continue;
        if (!j[key].is_number_unsigned() || j[key].get<uint64_t>() > k_job_end_max_peak_bytes)
            return std::string(key) + ": expected an integer 0.." +
                   std::to_string(k_job_end_max_peak_bytes);
        *into = j[key].get<uint64_t>();
    }
    return std::nullopt;
}

// The job_end body as a ledger row; the error names the first bad field.
Result<JobRow> job_end_row(const nlohmann::json &j)
{
    Fields f(j);
    JobRow row;
    row.request_id = f.u64("request_id");
    row.job_id = f.u64("job_id");
    int64_t exit_status = f.integer("exit_status");
    row.elapsed_seconds = f.u64("elapsed_seconds");
    row.cuda_oom = f.flag("cuda_oom");
    if (j.contains("measured_peak_bytes") && !j["measured_peak_bytes"].is_null())
        row.measured_peak_bytes = f.u64("measured_peak_bytes");
    if (j.contains("job_uid") && !j["job_uid"].is_null())
        row.job_uid = f.integer("job_uid");
    if (j.contains("oom_requeued"))
        row.oom_requeued = f.flag("oom_requeued");
    if (!f.error().empty())
        return Result<JobRow>::fail(f.error());
    // Ranges checked here, before any cast: a double such as 1e300 read as an integer is
    // undefined behaviour, and a negative or absurd figure would skew every report.
    if (exit_status < 0 || exit_status > k_job_end_max_exit_status)
        return Result<JobRow>::fail("exit_status: expected 0.." +
                                    std::to_string(k_job_end_max_exit_status));
    if (!j["elapsed_seconds"].is_number_integer() ||
        row.elapsed_seconds > k_job_end_max_elapsed_seconds)
        return Result<JobRow>::fail("elapsed_seconds: expected an integer 0.." +
                                    std::to_string(k_job_end_max_elapsed_seconds));
    if (row.measured_peak_bytes && (!j["measured_peak_bytes"].is_number_integer() ||
                                    *row.measured_peak_bytes > k_job_end_max_peak_bytes))
        return Result<JobRow>::fail("measured_peak_bytes: expected an integer 0.." +
                                    std::to_string(k_job_end_max_peak_bytes));
    if (row.job_id > k_job_end_max_job_id)
        return Result<JobRow>::fail("job_id: expected a Slurm job id 0.." +
                                    std::to_string(k_job_end_max_job_id));
    if (row.request_id > k_job_end_max_request_id)
        return Result<JobRow>::fail("request_id: expected 0.." +
                                    std::to_string(k_job_end_max_request_id));
    if (row.job_uid && (*row.job_uid < 0 || *row.job_uid >= k_job_end_no_uid))
        return Result<JobRow>::fail("job_uid: expected an integer 0.." +
                                    std::to_string(k_job_end_no_uid - 1));
    row.exit_status = (int)exit_status;
    auto account = slurm_name(j, "account");
    if (!account.ok())
        return Result<JobRow>::fail(account.error());
    auto partition = slurm_name(j, "partition");
    if (!partition.ok())
        return Result<JobRow>::fail(partition.error());
    auto enforcement = slurm_name(j, "enforcement");
    if (!enforcement.ok())
        return Result<JobRow>::fail(enforcement.error());
    if (enforcement.value() && xmem_enforcement_parse(enforcement.value()->c_str()) < 0)
        return Result<JobRow>::fail("enforcement: expected none, client, mps-server or dmem");
    if (account.value() && !calibration_account_ok(*account.value()))
        return Result<JobRow>::fail("account: expected 1 to 64 printable characters, no space "
                                    "or quote (issue 26, L7)");
    row.account = std::move(account).value();
    row.partition = std::move(partition).value();
    row.enforcement = std::move(enforcement).value();
    if (auto why = packed_share(j, row))
        return Result<JobRow>::fail(*why);
    return Result<JobRow>::ok(std::move(row));
}

// The uid the job ran as, which the request it names must belong to. Only the node reports a
// job's end: slurmstepd, as root (or xmemd's own uid, for a daemon not running as root, which
// serves no one else). A user's own report was taken once, and so one user could write rows
// without bound and teach `xmem calibrate` any margin (issue 26, M3 and M4). Root must say
// whose job it was, since the request id comes from the job's environment, which the job's
// user controls (issue 15, finding 11).
Result<int64_t> job_owner(const JobRow &row)
{
    if (row.reporter_uid != 0) {
        if (row.reporter_uid != (int64_t)geteuid())
            return Result<int64_t>::fail("only the node reports a job's end (the SPANK plugin "
                                         "in slurmstepd, as root); a report from uid " +
                                         std::to_string(row.reporter_uid) + " is not taken");
        if (row.job_uid && *row.job_uid != row.reporter_uid)
            return Result<int64_t>::fail("job_uid " + std::to_string(*row.job_uid) +
                                         " is not xmemd's own uid, the only one it serves");
        return Result<int64_t>::ok(row.reporter_uid);
    }
    if (!row.job_uid)
        return Result<int64_t>::fail("a report from root must name the job's uid "
                                     "(job_uid; update the SPANK plugin)");
    return Result<int64_t>::ok(*row.job_uid);
}

void handle_job_end(Conn *c, const nlohmann::json &j)
{
    Daemon *d = c->d;
    auto parsed = job_end_row(j);
    if (!parsed.ok()) {
        d->metrics().count_outcome(Outcome::bad_request);
        conn_reply(c,
                   outcome_reply(Outcome::bad_request, "xmem: job_end: " + parsed.error().message));
        return;
    }
    JobRow row = std::move(parsed).value();
    row.reporter_uid = c->peer.uid; // from SO_PEERCRED, whatever the body says
    auto owner = job_owner(row);
    if (!owner.ok()) {
        d->metrics().count_outcome(Outcome::job_end_rejected);
        conn_reply(
            c, outcome_reply(Outcome::job_end_rejected, "xmem: job_end: " + owner.error().message));
        return;
    }
    row.owner_uid = owner.value();
    // The client may leave before the ledger answers: look the Conn up again by address and
    // serial instead of trusting the pointer.
    Conn *conn = c;
    uint64_t serial = c->serial;
    d->ledger().job_end(
        row, [d, conn, serial](Outcome o, const std::string &msg, const std::string &record) {
            d->metrics().count_outcome(o);
            if (!d->conns().count(conn) || conn->serial != serial)
                return;
            auto reply = outcome_reply(o, msg);
            if (!record.empty())
                reply["record"] = record; // the node appends it to the job's AdminComment
            conn_reply(conn, reply);
        });
}

} // namespace

void dispatch_request(Conn *c, uint16_t type, const std::string &body)
{
    Daemon *d = c->d;
    if (!json_depth_within(body, k_json_max_depth)) {
        refuse_frame(c, Outcome::bad_request,
                     "xmem: request body nests deeper than " + std::to_string(k_json_max_depth) +
                         " levels");
        return;
    }
    nlohmann::json j = nlohmann::json::parse(body, nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
        refuse_frame(c, Outcome::bad_request, "xmem: request body is not a JSON object");
        return;
    }
    switch (type) {
    case XMEM_MSG_STATUS:
        d->metrics().count_outcome(Outcome::answered);
        conn_reply(c, d->status_json(c->peer.uid));
        return;
    case XMEM_MSG_STATS:
        d->metrics().count_outcome(Outcome::answered);
        conn_reply(c, d->stats_json());
        return;
    case XMEM_MSG_JOB_END:
        handle_job_end(c, j);
        return;
    case XMEM_MSG_ESTIMATE:
        if (d->draining()) {
            d->metrics().count_outcome(Outcome::shutting_down);
            conn_reply(c, outcome_reply(Outcome::shutting_down,
                                        "xmem: xmemd is shutting down (retry shortly)"));
            return;
        }
        estimate_begin(d->estimates(), c, j);
        return;
    default:
        refuse_frame(c, Outcome::bad_frame, "xmem: unexpected message type");
    }
}

} // namespace xmem::server
