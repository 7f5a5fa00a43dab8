// leaders.h — de-duplication of identical cache misses: the one job that profiles for a
// cache key (it leads), so an identical request that arrives meanwhile waits for it (follows)
// instead of profiling the same job again. The followers hang off their leader's job.
// Loop thread only; the jobs are only held, never looked into.
#ifndef XMEMD_LEADERS_H
#define XMEMD_LEADERS_H

#include <map>
#include <string>

namespace xmem::server
{

struct EstimateJob;

class Leaders
{
  public:
    // The job that profiles for `key`, or null.
    EstimateJob *find(const std::string &key) const;
    // `job` profiles for `key` from now on.
    void lead(const std::string &key, EstimateJob *job);
    // `job` no longer leads `key`; false (and nothing changes) when it did not lead it.
    bool step_down(const std::string &key, const EstimateJob *job);
    std::size_t size() const { return m_by_key.size(); }

  private:
    std::map<std::string, EstimateJob *> m_by_key;
};

} // namespace xmem::server
#endif
