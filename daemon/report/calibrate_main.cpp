// calibrate_main.cpp — xmem-calibrate (run as `xmem calibrate`): reads xmemd's ledger
// read-only, prints the evidence and the proposed margins, and with --apply writes them to
// the calibration file and has xmemd reload. Bad input is one line on stderr and exit 1,
// with nothing written; usage errors exit 2.
#include "calibrate.h"
#include "calibration.h"
#include "config.h"

#include "analysis/paths.h"

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iostream>
#include <unistd.h>

using namespace xmem::report;
namespace srv = xmem::server;

namespace
{
const char *const k_usage =
    "usage: xmem calibrate [--db PATH] [--config PATH] [--catalog gpus.yaml]\n"
    "                      [--since DATE] [--until DATE] [--by account]\n"
    "                      [--target-oom-rate R] [--min-pairs N] [--apply]\n"
    "Proposes the margin per GPU type (and per account with --by account) at which at most a\n"
    "share R of the ledger's jobs would have exceeded their share, with the evidence.\n"
    "--apply (root) writes it to the config's calibration file and reloads xmemd.\n";

// Takes calibrate's own options out of argv; the rest go to the report's parser.
xmem::Result<void> parse(int argc, char **argv, CalibrateOptions &opt)
{
    using R = xmem::Result<void>;
    opt.target = srv::k_calibrate_target_oom_rate;
    opt.min_pairs = srv::k_calibrate_min_pairs;
    std::vector<char *> rest{argv[0]};
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        bool valued = a == "--target-oom-rate" || a == "--min-pairs" || a == "--by";
        if (valued && i + 1 >= argc)
            return R::fail("xmem: calibrate: " + a + " needs a value");
        std::string v = valued ? argv[i + 1] : "";
        char *end = nullptr;
        if (a == "--apply") {
            opt.apply = true;
        } else if (a == "--by") {
            if (v != "account")
                return R::fail("xmem: calibrate: --by " + v + ": only --by account");
            opt.by_account = true;
        } else if (a == "--target-oom-rate") {
            opt.target = strtod(v.c_str(), &end);
            if (end == v.c_str() || *end || !(opt.target >= 0 && opt.target < 1))
                return R::fail("xmem: calibrate: --target-oom-rate " + v +
                               ": expected a rate 0 <= R < 1 (0.01: one job in a hundred)");
        } else if (a == "--min-pairs") {
            long n = strtol(v.c_str(), &end, 10);
            if (end == v.c_str() || *end || n < 1 || n > 1000000)
                return R::fail("xmem: calibrate: --min-pairs " + v + ": expected 1..1000000");
            opt.min_pairs = (std::size_t)n;
        } else {
            rest.push_back(argv[i]);
            continue;
        }
        i += valued;
    }
    auto r = parse_args((int)rest.size(), rest.data(), opt.sources);
    if (r.ok() && !opt.sources.what_if.empty())
        return R::fail("xmem: calibrate: --what-if is xmem report's (see xmem calibrate --help)");
    if (!r.ok()) { // the report's line, in calibrate's words
        std::string line = r.error().message;
        auto report = line.find("xmem report --help");
        if (report != std::string::npos)
            line.replace(report, 18, "xmem calibrate --help");
        return R::fail(line.replace(0, 13, "xmem: calibrate:"));
    }
    return R::success();
}

// xmemd's config as xmemd reads it (calibration file included), or the built-in defaults
// when the file does not exist and the ledger is given.
xmem::Result<srv::Config> load_config(const CalibrateOptions &opt)
{
    using R = xmem::Result<srv::Config>;
    if (xmem::analysis::is_regular_file(opt.sources.config)) {
        auto c = srv::config_load(opt.sources.config);
        return c.ok() ? c : R::fail("xmem: calibrate: " + c.error().message);
    }
    if (opt.sources.db.empty())
        return R::fail("xmem: calibrate: no config at " + opt.sources.config +
                       " (give --config PATH, or --db PATH)");
    srv::Config c = srv::config_defaults();
    c.catalog = opt.sources.catalog;
    auto read = srv::config_read_catalog(c);
    return read.ok() ? R::ok(std::move(c)) : R::fail("xmem: calibrate: " + read.error().message);
}

int current_margin(const srv::Policy &p, const std::string &gpu, const std::string &account)
{
    for (const srv::GpuMargin &m : p.margins) {
        if (m.gpu != gpu)
            continue;
        for (const auto &[name, percent] : m.accounts)
            if (name == account)
                return percent;
        return m.percent;
    }
    return p.margin_percent;
}

// Today's margins with the proposals laid over them.
std::vector<srv::GpuMargin> merged(const srv::Policy &p, const std::vector<Evidence> &all)
{
    std::vector<srv::GpuMargin> out = p.margins;
    auto gpu_entry = [&](const std::string &gpu) -> srv::GpuMargin & {
        for (srv::GpuMargin &m : out)
            if (m.gpu == gpu)
                return m;
        out.push_back({gpu, p.margin_percent, {}});
        return out.back();
    };
    for (const Evidence &e : all) {
        if (!e.proposed)
            continue;
        srv::GpuMargin &m = gpu_entry(e.gpu);
        if (e.account.empty()) {
            m.percent = *e.proposed;
            continue;
        }
        bool found = false;
        for (auto &[name, percent] : m.accounts)
            if (name == e.account)
                percent = *e.proposed, found = true;
        if (!found)
            m.accounts.emplace_back(e.account, *e.proposed);
    }
    return out;
}

// SIGHUP to the xmemd whose pid the lockfile holds; "" or the one line why not.
std::string reload_xmemd(const std::string &lockfile)
{
    std::ifstream in(lockfile);
    long pid = 0;
    if (!(in >> pid) || pid <= 1)
        return "no xmemd pid in " + lockfile + " (xmemd reads the file when it starts)";
    std::ifstream comm("/proc/" + std::to_string(pid) + "/comm");
    std::string name;
    if (!(comm >> name) || name != "xmemd")
        return "pid " + std::to_string(pid) + " in " + lockfile +
               " is not xmemd (xmemd reads the file when it starts)";
    if (kill((pid_t)pid, SIGHUP) != 0)
        return "cannot signal xmemd (pid " + std::to_string(pid) + "): " + strerror(errno);
    return "";
}

int apply(const srv::Config &config, const std::vector<Evidence> &all,
          const xmem::analysis::Catalog &catalog)
{
    std::string path = srv::config_calibration_path(config);
    std::vector<srv::GpuMargin> margins = merged(config.policy, all);
    time_t now = time(nullptr);
    char when[32];
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    std::string text = srv::calibration_render(
        margins, std::string("Written by xmem calibrate --apply at ") + when +
                     "; xmemd reads it on start and on SIGHUP.\nRe-run xmem calibrate "
                     "rather than editing it (docs/enforcement.md, Calibration).");
    auto check = srv::calibration_parse(text, path, catalog); // what xmemd will read
    if (!check.ok())
        return fail_line("xmem: calibrate: internal error, the file would not load: " +
                         check.error().message);
    auto written = srv::file_replace(path, text, 0644);
    if (!written.ok())
        return fail_line("xmem: calibrate: " + written.error().message);
    std::cout << "wrote " << path << "\n";
    std::string why = reload_xmemd(config.lockfile);
    if (!why.empty()) {
        std::cout << "xmem: calibrate: not reloaded: " << why << "\n";
        return 0;
    }
    std::cout << "xmemd reloads it now (SIGHUP)"
              << (config.policy_file.empty() ? "" : " and renders ") << config.policy_file << "\n";
    return 0;
}

// Jobs in the window that ran under no estimate: they have no GPU type to be counted under.
std::size_t without_estimate(const std::vector<JobRecord> &jobs, const CalibrateOptions &opt)
{
    std::size_t n = 0;
    for (const JobRecord &j : jobs) {
        Pair unused;
        n += in_window(j, opt.sources) && classify(j, unused) == Skip::no_estimate;
    }
    return n;
}

// The first defective row, as the one line that refuses the run; "" when none.
std::string first_defect(const std::vector<JobRecord> &jobs, const std::string &db)
{
    for (const JobRecord &j : jobs)
        if (!j.defect.empty())
            return "xmem: calibrate: " + db + ": job " + std::to_string(j.job_id) + ": " +
                   j.defect + " (correct or delete the row; nothing was applied)";
    return "";
}
} // namespace

int main(int argc, char **argv)
{
    if (asks_for_help(argc, argv)) {
        std::cout << k_usage;
        return 0;
    }
    CalibrateOptions opt;
    if (auto parsed = parse(argc, argv, opt); !parsed.ok()) {
        std::cerr << parsed.error().message << "\n";
        return 2;
    }
    if (opt.apply && geteuid() != 0)
        return fail_line("xmem: calibrate: --apply writes the calibration file and signals xmemd: "
                         "run it as root (without --apply it only proposes)");
    auto config = load_config(opt);
    if (!config.ok())
        return fail_line(config.error().message);
    if (opt.sources.db.empty())
        opt.sources.db = config.value().database;
    if (opt.sources.catalog.empty())
        opt.sources.catalog = config.value().catalog;
    auto catalog = load_sources(opt.sources);
    if (!catalog.ok())
        return fail_line(catalog.error().message);
    std::vector<JobRecord> jobs;
    if (auto loaded = load_jobs(opt.sources, catalog.value(), jobs); !loaded.ok())
        return fail_line(loaded.error().message);
    if (std::string bad = first_defect(jobs, opt.sources.db); !bad.empty())
        return fail_line(bad);
    const srv::Policy &policy = config.value().policy;
    auto all = calibrate(jobs, opt, [&](const std::string &gpu, const std::string &account) {
        return current_margin(policy, gpu, account);
    });
    std::size_t pairs = 0, proposals = 0;
    for (const Evidence &e : all)
        pairs += e.account.empty() ? e.pairs.size() : 0, proposals += e.proposed.has_value();
    if (pairs == 0)
        return fail_line("xmem: calibrate: " + opt.sources.db +
                         " holds no pair of an estimate and a " + "measured peak (" +
                         std::to_string(jobs.size()) +
                         " job(s); peaks need NVML on the nodes, docs/enforcement.md)");
    std::cout << render_evidence(all, opt);
    if (std::size_t n = without_estimate(jobs, opt))
        std::cout << "skipped " << n << " job(s) of no GPU type: " << skip_reason(Skip::no_estimate)
                  << "\n";
    if (!opt.apply)
        return 0;
    if (proposals == 0)
        return fail_line("xmem: calibrate: nothing to apply: no GPU type has a proposal");
    return apply(config.value(), all, catalog.value());
}
