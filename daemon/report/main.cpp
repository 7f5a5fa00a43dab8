// main.cpp — xmem-report (run as `xmem report`): reads xmemd's ledger read-only and prints
// what packing saved. Every failure is one line on stderr and exit 1; usage errors exit 2.
#include "report.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>

using namespace xmem_report;

namespace
{
const char *const k_usage =
    "usage: xmem report [--db PATH] [--config PATH] [--catalog gpus.yaml]\n"
    "                   [--since DATE] [--until DATE] [--by user|account|partition|gpu]\n"
    "                   [--format table|csv|json|html] [-o FILE]\n"
    "DATE is YYYY-MM-DD or YYYY-MM-DDTHH:MM[:SS], UTC; --until includes a bare date's day.\n"
    "The ledger defaults to the `database:` of the config (/etc/slurm/xmem.yaml).\n";

bool is_file(const std::string &p)
{
    struct stat sb;
    return !p.empty() && stat(p.c_str(), &sb) == 0 && S_ISREG(sb.st_mode);
}

// --catalog, $XMEM_CATALOG, the source tree's etc/gpus.yaml, then the installed one.
std::string find_catalog(const std::string &given)
{
    if (!given.empty())
        return given;
    const char *env = std::getenv("XMEM_CATALOG");
    for (std::string p :
         {std::string(env ? env : ""), std::string(XMEM_SOURCE_DIR) + "/etc/gpus.yaml",
          std::string(XMEM_SYSCONFDIR) + "/xmem/gpus.yaml"})
        if (is_file(p))
            return p;
    return "";
}

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

int fail(const std::string &line)
{
    std::cerr << line << "\n";
    return 1;
}
} // namespace

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            std::cout << k_usage;
            return 0;
        }
    Options opt;
    if (auto err = parse_args(argc, argv, opt)) {
        std::cerr << *err << "\n";
        return 2;
    }
    if (opt.db.empty()) {
        opt.db = database_from_config(opt.config);
        if (opt.db.empty())
            return fail("xmem: report: no `database:` in " + opt.config + "; give --db PATH");
    }
    std::string catalog_path = find_catalog(opt.catalog);
    if (!is_file(catalog_path))
        return fail("xmem: report: GPU catalog not found" +
                    (opt.catalog.empty() ? std::string() : " at " + opt.catalog) +
                    "; give --catalog gpus.yaml");
    auto catalog = read_catalog(catalog_path);
    std::vector<JobRecord> jobs;
    if (auto err = load_jobs(opt, catalog, jobs))
        return fail(*err);
    std::string text = render(build_report(opt, jobs));
    if (opt.output.empty() || opt.output == "-") {
        std::cout << text;
        return std::cout.flush() ? 0 : fail("xmem: report: cannot write to stdout");
    }
    std::ofstream out(opt.output, std::ios::binary | std::ios::trunc);
    if (!(out << text) || !out.flush())
        return fail("xmem: report: cannot write " + opt.output + ": " + strerror(errno));
    return 0;
}
