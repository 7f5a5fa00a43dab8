// metrics.h — counters and histograms (loop thread only), rendered as Prometheus text and as
// JSON for `stats`. Names follow Prometheus conventions (xmemd_*_total, *_seconds).
#ifndef XMEMD_METRICS_H
#define XMEMD_METRICS_H

#include "outcome.h"

#include <array>
#include <cstdint>
#include <string>

namespace xmem::server
{

class Histogram
{
  public:
    static constexpr int k_buckets = 12;
    void observe(double seconds);
    std::string prometheus(const std::string &name, const std::string &help) const;
    uint64_t count() const { return m_count; }
    double sum() const { return m_sum; }

  private:
    std::array<uint64_t, k_buckets> m_counts{};
    uint64_t m_count = 0;
    double m_sum = 0;
};

struct Gauges {
    int queue_depth = 0;
    int in_flight = 0;
    int connections = 0;
    std::size_t cache_entries = 0;
};

class Metrics
{
  public:
    static constexpr int k_max_outcome = 64;
    void count_outcome(Outcome o);
    uint64_t outcome_count(Outcome o) const;
    uint64_t requests_total() const;
    void cache_hit() { m_cache_hits++; }
    void cache_miss() { m_cache_misses++; }
    uint64_t cache_hits() const { return m_cache_hits; }
    uint64_t cache_misses() const { return m_cache_misses; }
    Histogram profile_seconds, analyze_seconds, request_seconds;
    std::string prometheus(const Gauges &g) const;

  private:
    std::array<uint64_t, k_max_outcome> m_outcomes{};
    uint64_t m_cache_hits = 0, m_cache_misses = 0;
};

} // namespace xmem::server
#endif
