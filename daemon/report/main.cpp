// main.cpp — xmem-report (run as `xmem report`): reads xmemd's ledger read-only and prints
// what packing saved. Every failure is one line on stderr and exit 1; usage errors exit 2.
#include "report.h"
#include "whatif.h"

#include "analysis/paths.h"
#include "config.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>

using namespace xmem::report;

namespace
{
const char *const k_usage =
    "usage: xmem report [--db PATH] [--config PATH] [--catalog gpus.yaml]\n"
    "                   [--since DATE] [--until DATE] [--by user|account|partition|gpu]\n"
    "                   [--format table|csv|json|html] [-o FILE] [--by-day]\n"
    "                   [--source ledger|sacct] [--sacct PATH]\n"
    "                   [--what-if KEY=VALUE,...]\n"
    "DATE is YYYY-MM-DD or YYYY-MM-DDTHH:MM[:SS], UTC; --until includes a bare date's day.\n"
    "The ledger and the GPU catalog default to the config's `database:` and `catalog:`\n"
    "(xmemd's config, /etc/slurm/xmem.yaml), read as xmemd reads them.\n"
    "The estimate error over time is per week (from its Monday), or per day with --by-day.\n"
    "--source sacct reads every login node's jobs from Slurm's accounting (slurmdbd) instead\n"
    "of this node's ledger: the records xmem wrote into the jobs' AdminComment.\n"
    "--what-if replays the jobs with an estimate and a measured peak under the config's policy\n"
    "and under it changed: KEY is mode (shard|mps|whole), margin_percent,\n"
    "whole_gpu_above_percent or require_enforcement, as in xmem.yaml's policy: block.\n";

std::string render(const Report &r)
{
    switch (r.opt.format) {
    case Format::csv:
        return render_csv(r);
    case Format::json:
        return render_json(r);
    case Format::html:
        return render_html(r);
    case Format::table:
        break;
    }
    return render_table(r);
}

// The jobs replayed under the config's policy, as it is and changed (--what-if).
xmem::Result<std::shared_ptr<const WhatIf>> what_if(const Options &opt,
                                                    const std::vector<JobRecord> &jobs)
{
    using R = xmem::Result<std::shared_ptr<const WhatIf>>;
    if (!xmem::analysis::is_regular_file(opt.config))
        return R::fail(
            "xmem: report: --what-if replays the policy of xmemd's config: no config at " +
            opt.config + " (give --config PATH)");
    auto config = xmem::server::config_load(opt.config);
    if (!config.ok())
        return R::fail("xmem: report: " + config.error().message);
    auto changes = parse_changes(opt.what_if); // checked by parse_args
    if (!changes.ok())
        return R::fail(changes.error());
    auto w =
        build_what_if(jobs, opt, config.value().policy, changes.value(), lua_shares(opt.config));
    if (!w.ok())
        return R::fail(w.error());
    return R::ok(std::make_shared<const WhatIf>(std::move(w).value()));
}
} // namespace

int main(int argc, char **argv)
{
    if (asks_for_help(argc, argv)) {
        std::cout << k_usage;
        return 0;
    }
    Options opt;
    auto parsed = parse_args(argc, argv, opt);
    if (!parsed.ok()) {
        std::cerr << parsed.error().message << "\n";
        return 2;
    }
    auto catalog = load_sources(opt);
    if (!catalog.ok())
        return fail_line(catalog.error().message);
    std::vector<JobRecord> jobs;
    auto loaded = opt.source == Source::sacct ? load_sacct_jobs(opt, catalog.value(), jobs)
                                              : load_jobs(opt, catalog.value(), jobs);
    if (!loaded.ok())
        return fail_line(loaded.error().message);
    Report report = build_report(opt, jobs);
    if (!opt.what_if.empty()) {
        auto replayed = what_if(opt, jobs);
        if (!replayed.ok())
            return fail_line(replayed.error().message);
        report.what_if = replayed.value();
    }
    std::string text = render(report);
    if (opt.output.empty() || opt.output == "-") {
        std::cout << text;
        return std::cout.flush() ? 0 : fail_line("xmem: report: cannot write to stdout");
    }
    std::ofstream out(opt.output, std::ios::binary | std::ios::trunc);
    if (!(out << text) || !out.flush())
        return fail_line("xmem: report: cannot write " + opt.output + ": " + strerror(errno));
    return 0;
}
