// dashboard_metrics_test.cpp — every xmemd_* metric the Grafana dashboard queries is one
// xmemd exports, so the dashboard cannot drift from daemon/server/metrics.cpp. The exported
// names are taken from the exposition text xmemd itself renders, not from a list kept here.
//
//   dashboard-metrics-test DASHBOARD.json    exit 0, or 1 with one line per unknown name
#include "metrics.h"

#include <fstream>
#include <iostream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

namespace
{

// Sample names of the Prometheus text xmemd serves on /metrics (histograms give their
// _bucket, _sum and _count samples, which is what a query names).
std::set<std::string> exported_names()
{
    std::set<std::string> names;
    std::istringstream text(xmem::server::Metrics().prometheus(xmem::server::Gauges{}));
    std::string line;
    while (std::getline(text, line))
        if (!line.empty() && line[0] != '#')
            names.insert(line.substr(0, line.find_first_of("{ ")));
    return names;
}

} // namespace

int main(int argc, char **argv)
{
    if (argc != 2) {
        std::cerr << "usage: dashboard-metrics-test DASHBOARD.json\n";
        return 2;
    }
    std::ifstream in(argv[1]);
    std::stringstream dashboard;
    dashboard << in.rdbuf();
    if (!in || dashboard.str().empty()) {
        std::cerr << "xmem: " << argv[1] << ": cannot read the dashboard\n";
        return 1;
    }
    const std::set<std::string> exported = exported_names();
    static const std::regex metric(R"(xmemd_[a-z_]+)");
    const std::string text = dashboard.str();
    int queried = 0, unknown = 0;
    for (std::sregex_iterator it(text.begin(), text.end(), metric), end; it != end; ++it) {
        queried++;
        if (!exported.count(it->str())) {
            unknown++;
            std::cerr << "xmem: " << argv[1] << " queries " << it->str()
                      << ", which xmemd does not export (daemon/server/metrics.cpp); fix the "
                         "dashboard or the metric\n";
        }
    }
    if (queried == 0) {
        std::cerr << "xmem: " << argv[1] << " queries no xmemd_* metric; is it the dashboard?\n";
        return 1;
    }
    std::cout << queried << " metric references, " << exported.size() << " names exported, "
              << unknown << " unknown\n";
    return unknown ? 1 : 0;
}
