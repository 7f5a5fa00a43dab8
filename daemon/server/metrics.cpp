// metrics.cpp — Prometheus text exposition format 0.0.4.
#include "metrics.h"

#include <cstdio>
#include <sstream>

namespace xmem::server
{

namespace
{
// Seconds; profiles take seconds to minutes, cache hits milliseconds.
constexpr double k_bounds[Histogram::k_buckets] = {0.001, 0.005, 0.01, 0.05, 0.1, 0.5,
                                                   1,     5,     15,   60,   300, 1200};
} // namespace

void Histogram::observe(double s)
{
    for (int i = 0; i < k_buckets; i++)
        if (s <= k_bounds[i])
            m_counts[i]++;
    m_count++;
    m_sum += s;
}

std::string Histogram::prometheus(const std::string &name, const std::string &help) const
{
    std::ostringstream o;
    o << "# HELP " << name << " " << help << "\n# TYPE " << name << " histogram\n";
    for (int i = 0; i < k_buckets; i++)
        o << name << "_bucket{le=\"" << k_bounds[i] << "\"} " << m_counts[i] << "\n";
    o << name << "_bucket{le=\"+Inf\"} " << m_count << "\n";
    o << name << "_sum " << m_sum << "\n" << name << "_count " << m_count << "\n";
    return o.str();
}

void Metrics::count_outcome(Outcome o)
{
    int n = static_cast<int>(o);
    if (n >= 0 && n < k_max_outcome)
        m_outcomes[n]++;
}

uint64_t Metrics::outcome_count(Outcome o) const
{
    int n = static_cast<int>(o);
    return n >= 0 && n < k_max_outcome ? m_outcomes[n] : 0;
}

uint64_t Metrics::requests_total() const
{
    uint64_t t = 0;
    for (auto c : m_outcomes)
        t += c;
    return t;
}

std::string Metrics::prometheus(const Gauges &g) const
{
    std::ostringstream o;
    o << "# HELP xmemd_requests_total Requests answered, by numbered outcome (docs/outcomes.md).\n"
      << "# TYPE xmemd_requests_total counter\n";
    int n;
    const Outcome *all = outcome_all(&n);
    for (int i = 0; i < n; i++)
        o << "xmemd_requests_total{outcome=\"" << outcome_name(all[i]) << "\",code=\""
          << static_cast<int>(all[i]) << "\"} " << outcome_count(all[i]) << "\n";
    o << "# HELP xmemd_queue_depth Estimates waiting for a profiling slot.\n"
      << "# TYPE xmemd_queue_depth gauge\nxmemd_queue_depth " << g.queue_depth << "\n"
      << "# HELP xmemd_profiles_in_flight Profiles running now.\n"
      << "# TYPE xmemd_profiles_in_flight gauge\nxmemd_profiles_in_flight " << g.in_flight << "\n"
      << "# HELP xmemd_connections Open client connections.\n"
      << "# TYPE xmemd_connections gauge\nxmemd_connections " << g.connections << "\n"
      << "# HELP xmemd_cache_entries Estimates held in the cache.\n"
      << "# TYPE xmemd_cache_entries gauge\nxmemd_cache_entries " << g.cache_entries << "\n"
      << "# HELP xmemd_cache_hits_total Estimates answered from the cache.\n"
      << "# TYPE xmemd_cache_hits_total counter\nxmemd_cache_hits_total " << m_cache_hits << "\n"
      << "# HELP xmemd_cache_misses_total Estimates that needed a profile.\n"
      << "# TYPE xmemd_cache_misses_total counter\nxmemd_cache_misses_total " << m_cache_misses
      << "\n";
    uint64_t lookups = m_cache_hits + m_cache_misses;
    o << "# HELP xmemd_cache_hit_ratio Hits over lookups since start.\n"
      << "# TYPE xmemd_cache_hit_ratio gauge\nxmemd_cache_hit_ratio "
      << (lookups ? (double)m_cache_hits / (double)lookups : 0.0) << "\n";
    o << profile_seconds.prometheus("xmemd_profile_duration_seconds",
                                    "Wall time of estimator runs.")
      << analyze_seconds.prometheus("xmemd_analysis_duration_seconds",
                                    "Simulator analysis time reported by the estimator.")
      << request_seconds.prometheus("xmemd_request_duration_seconds",
                                    "Time from a complete estimate request to its answer.");
    return o.str();
}

} // namespace xmem::server
