// main.cpp — xmem-report (run as `xmem report`): reads xmemd's ledger read-only and prints
// what packing saved. Every failure is one line on stderr and exit 1; usage errors exit 2.
#include "report.h"

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
    "DATE is YYYY-MM-DD or YYYY-MM-DDTHH:MM[:SS], UTC; --until includes a bare date's day.\n"
    "The ledger and the GPU catalog default to the config's `database:` and `catalog:`\n"
    "(xmemd's config, /etc/slurm/xmem.yaml), read as xmemd reads them.\n"
    "The estimate error over time is per week (from its Monday), or per day with --by-day.\n"
    "--source sacct reads every login node's jobs from Slurm's accounting (slurmdbd) instead\n"
    "of this node's ledger: the records xmem wrote into the jobs' AdminComment.\n";

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
    std::string text = render(build_report(opt, jobs));
    if (opt.output.empty() || opt.output == "-") {
        std::cout << text;
        return std::cout.flush() ? 0 : fail_line("xmem: report: cannot write to stdout");
    }
    std::ofstream out(opt.output, std::ios::binary | std::ios::trunc);
    if (!(out << text) || !out.flush())
        return fail_line("xmem: report: cannot write " + opt.output + ": " + strerror(errno));
    return 0;
}
