// report_core.cpp — dates, options, grouping and the arithmetic of `xmem report`.
#include "report.h"
#include "calibrate.h"
#include "whatif.h"

#include "contract/enforcement.h"

#include <algorithm>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <iostream>

namespace xmem::report
{

namespace
{
bool all_digits(const std::string &s, size_t from, size_t n)
{
    if (from + n > s.size())
        return false;
    for (size_t i = from; i < from + n; i++)
        if (s[i] < '0' || s[i] > '9')
            return false;
    return true;
}

int num(const std::string &s, size_t from, size_t n)
{
    return std::stoi(s.substr(from, n));
}
} // namespace

std::optional<int64_t> parse_date(const std::string &s, bool end_of_day)
{
    // YYYY-MM-DD, optionally followed by THH:MM or THH:MM:SS (space also accepted for T).
    if (!all_digits(s, 0, 4) || s.size() < 10 || s[4] != '-' || !all_digits(s, 5, 2) ||
        s[7] != '-' || !all_digits(s, 8, 2))
        return std::nullopt;
    struct tm t {
    };
    t.tm_year = num(s, 0, 4) - 1900;
    t.tm_mon = num(s, 5, 2) - 1;
    t.tm_mday = num(s, 8, 2);
    bool has_time = s.size() > 10;
    if (has_time) {
        bool seconds = s.size() == 19;
        if ((s.size() != 16 && !seconds) || (s[10] != 'T' && s[10] != ' ') ||
            !all_digits(s, 11, 2) || s[13] != ':' || !all_digits(s, 14, 2) ||
            (seconds && (s[16] != ':' || !all_digits(s, 17, 2))))
            return std::nullopt;
        t.tm_hour = num(s, 11, 2);
        t.tm_min = num(s, 14, 2);
        t.tm_sec = seconds ? num(s, 17, 2) : 0;
        if (t.tm_hour > 23 || t.tm_min > 59 || t.tm_sec > 59)
            return std::nullopt;
    }
    struct tm check = t;
    time_t ts = timegm(&check);
    // timegm normalises 2026-02-30 to March 2nd: a date that does not round-trip is invalid.
    if (ts == (time_t)-1 || check.tm_mday != t.tm_mday || check.tm_mon != t.tm_mon ||
        t.tm_mon < 0 || t.tm_mon > 11)
        return std::nullopt;
    return (int64_t)ts + (end_of_day && !has_time ? 86400 : 0);
}

std::string format_day(int64_t ts)
{
    time_t t = (time_t)ts;
    struct tm tm {
    };
    gmtime_r(&t, &tm);
    char buf[16];
    strftime(buf, sizeof(buf), "%Y-%m-%d", &tm);
    return buf;
}

std::optional<GroupBy> parse_group(const std::string &s)
{
    if (s == "user")
        return GroupBy::user;
    if (s == "account")
        return GroupBy::account;
    if (s == "partition")
        return GroupBy::partition;
    if (s == "gpu")
        return GroupBy::gpu;
    return std::nullopt;
}

const char *group_name(GroupBy g)
{
    switch (g) {
    case GroupBy::user:
        return "user";
    case GroupBy::account:
        return "account";
    case GroupBy::partition:
        return "partition";
    case GroupBy::gpu:
        return "gpu";
    }
    return "user";
}

std::optional<Format> parse_format(const std::string &s)
{
    if (s == "table")
        return Format::table;
    if (s == "csv")
        return Format::csv;
    if (s == "json")
        return Format::json;
    if (s == "html")
        return Format::html;
    return std::nullopt;
}

bool asks_for_help(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
            return true;
    return false;
}

int fail_line(const std::string &line)
{
    std::cerr << line << "\n"; // after what the command printed: std::cerr flushes std::cout
    return 1;
}

xmem::Result<void> parse_args(int argc, char **argv, Options &opt)
{
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i], val;
        size_t eq = a.find('=');
        bool inline_val = a.rfind("--", 0) == 0 && eq != std::string::npos;
        std::string name = inline_val ? a.substr(0, eq) : a;
        if (a == "--by-day") {
            opt.by_day = true;
            continue;
        }
        bool takes = name == "--db" || name == "--since" || name == "--until" || name == "--by" ||
                     name == "--format" || name == "-o" || name == "--output" ||
                     name == "--config" || name == "--catalog" || name == "--source" ||
                     name == "--sacct" || name == "--what-if";
        if (!takes)
            return xmem::Result<void>::fail("xmem: report: unknown option '" + a +
                                            "' (see xmem report --help)");
        if (inline_val)
            val = a.substr(eq + 1);
        else if (i + 1 < argc)
            val = argv[++i];
        else
            return xmem::Result<void>::fail("xmem: report: " + name + " needs a value");
        if (name == "--db")
            opt.db = val;
        else if (name == "--config")
            opt.config = val;
        else if (name == "--catalog")
            opt.catalog = val;
        else if (name == "--sacct")
            opt.sacct = val;
        else if (name == "--what-if") {
            auto changes = parse_changes(val); // the values too, before anything is read
            if (!changes.ok())
                return xmem::Result<void>::fail(changes.error());
            opt.what_if = val;
        } else if (name == "--source" && (val == "ledger" || val == "sacct"))
            opt.source = val == "ledger" ? Source::ledger : Source::sacct;
        else if (name == "--source")
            return xmem::Result<void>::fail("xmem: report: unknown source '" + val +
                                            "' (use ledger or sacct)");
        else if (name == "-o" || name == "--output")
            opt.output = val;
        else if (name == "--since" || name == "--until") {
            auto ts = parse_date(val, name == "--until");
            if (!ts)
                return xmem::Result<void>::fail(
                    "xmem: report: " + name + " '" + val +
                    "' is not a date (YYYY-MM-DD or YYYY-MM-DDTHH:MM[:SS], UTC)");
            (name == "--since" ? opt.since : opt.until) = ts;
        } else if (name == "--by") {
            auto g = parse_group(val);
            if (!g)
                return xmem::Result<void>::fail("xmem: report: cannot group by '" + val +
                                                "' (use user, account, partition or gpu)");
            opt.by = *g;
        } else {
            auto f = parse_format(val);
            if (!f)
                return xmem::Result<void>::fail("xmem: report: unknown format '" + val +
                                                "' (use table, csv, json or html)");
            opt.format = *f;
        }
    }
    if (opt.since && opt.until && *opt.since >= *opt.until)
        return xmem::Result<void>::fail("xmem: report: --since is not before --until");
    return xmem::Result<void>::success();
}

bool is_packed(bool estimated, bool check_only, uint64_t limit_bytes, uint64_t capacity_bytes)
{
    return estimated && !check_only && capacity_bytes > 0 && limit_bytes > 0 &&
           limit_bytes < capacity_bytes;
}

double gpu_hours(const JobRecord &j)
{
    return j.gpu_fraction.value_or(1.0) * (double)j.elapsed_seconds / 3600.0;
}

double memory_gib_hours_saved(const JobRecord &j)
{
    if (!j.packed)
        return 0;
    double capacity = (double)j.capacity_bytes / 1073741824.0;
    double granted =
        j.gpu_fraction ? *j.gpu_fraction * capacity : (double)j.limit_bytes / 1073741824.0;
    return (capacity - granted) * (double)j.elapsed_seconds / 3600.0;
}

double gpu_hours_freed(const JobRecord &j)
{
    if (!j.packed || j.capacity_bytes == 0 || j.limit_bytes >= j.capacity_bytes)
        return 0;
    double share = (double)j.limit_bytes / (double)j.capacity_bytes;
    return (1.0 - share) * (double)j.elapsed_seconds / 3600.0;
}

std::string group_key(const JobRecord &j, GroupBy g)
{
    const std::string &k = g == GroupBy::user        ? j.user
                           : g == GroupBy::account   ? j.account
                           : g == GroupBy::partition ? j.partition
                                                     : j.gpu;
    return k.empty() ? "(unknown)" : k;
}

const std::vector<std::string> &enforcement_keys()
{
    static const std::vector<std::string> keys = [] {
        std::vector<std::string> k(xmem_enforcement_names,
                                   xmem_enforcement_names + XMEM_ENFORCE_LEVELS);
        k.push_back("unknown");
        return k;
    }();
    return keys;
}

std::string period_key(int64_t ts, bool by_day)
{
    if (by_day)
        return format_day(ts);
    int64_t day = ts >= 0 ? ts / 86400 : (ts - 86399) / 86400;
    int64_t since_monday = ((day + 3) % 7 + 7) % 7; // 1970-01-01 was a Thursday
    return format_day((day - since_monday) * 86400);
}

void Totals::add(const JobRecord &j)
{
    jobs++;
    oom_requeued += j.oom_requeued;
    by_enforcement[j.enforcement.empty() ? "unknown" : j.enforcement]++;
    failed += j.exit_status != 0 || j.cuda_oom;
    elapsed_hours += (double)j.elapsed_seconds / 3600.0;
    gpu_hours += xmem::report::gpu_hours(j);
    memory_gib_hours_saved += xmem::report::memory_gib_hours_saved(j);
    if (!j.packed)
        return;
    packed++;
    oom_after_packing += j.cuda_oom;
    requested_bytes += (double)j.capacity_bytes;
    limit_bytes += (double)j.limit_bytes;
    estimated_bytes += (double)j.estimate_bytes;
    gpu_hours_freed += xmem::report::gpu_hours_freed(j);
    if (j.measured_bytes && *j.measured_bytes > 0) {
        measured_jobs++;
        measured_bytes += (double)*j.measured_bytes;
        abs_error_sum += std::fabs((double)j.estimate_bytes - (double)*j.measured_bytes) /
                         (double)*j.measured_bytes;
    }
}

namespace
{
// A job as `xmem calibrate` counts it: a pair (measured, or censored by an OOM on its
// share), an OOM, a requeue.
void add_to_period(ErrorPeriod &p, const JobRecord &j)
{
    Pair pair;
    if (j.defect.empty() && classify(j, pair) == Skip::none) {
        p.pairs++;
        if (!pair.censored)
            p.errors.push_back(pair_error(pair));
    }
    p.ooms += j.cuda_oom;
    p.requeues += j.oom_requeued;
}
} // namespace

Report build_report(const Options &opt, const std::vector<JobRecord> &jobs)
{
    Report r;
    r.opt = opt;
    for (const auto &j : jobs) {
        if ((opt.since && j.ts < *opt.since) || (opt.until && j.ts >= *opt.until))
            continue;
        r.total.add(j);
        r.groups[group_key(j, opt.by)].add(j);
        r.by_user[group_key(j, GroupBy::user)].add(j);
        r.by_account[group_key(j, GroupBy::account)].add(j);
        r.freed_per_day[format_day(j.ts)] += gpu_hours_freed(j);
        if (j.packed && j.measured_bytes)
            r.accuracy.emplace_back(j.estimate_bytes / 1073741824.0,
                                    *j.measured_bytes / 1073741824.0);
        add_to_period(r.error_over_time[period_key(j.ts, opt.by_day)], j);
    }
    for (auto &[key, period] : r.error_over_time)
        std::sort(period.errors.begin(), period.errors.end());
    return r;
}

std::string csv_field(const std::string &s)
{
    if (s.find_first_of(",\"\r\n") == std::string::npos)
        return s;
    std::string out = "\"";
    for (char c : s)
        out += c == '"' ? std::string("\"\"") : std::string(1, c);
    return out + "\"";
}

std::string json_string(const std::string &s)
{
    std::string out = "\"";
    for (unsigned char c : s) {
        switch (c) {
        case '"':
            out += "\\\"";
            break;
        case '\\':
            out += "\\\\";
            break;
        case '\n':
            out += "\\n";
            break;
        case '\r':
            out += "\\r";
            break;
        case '\t':
            out += "\\t";
            break;
        default:
            if (c < 0x20) {
                char buf[8];
                snprintf(buf, sizeof(buf), "\\u%04x", c);
                out += buf;
            } else {
                out += (char)c;
            }
        }
    }
    return out + "\"";
}

std::string html_escape(const std::string &s)
{
    std::string out;
    for (char c : s) {
        switch (c) {
        case '&':
            out += "&amp;";
            break;
        case '<':
            out += "&lt;";
            break;
        case '>':
            out += "&gt;";
            break;
        case '"':
            out += "&quot;";
            break;
        case '\'':
            out += "&#39;";
            break;
        default:
            out += c;
        }
    }
    return out;
}

} // namespace xmem::report
