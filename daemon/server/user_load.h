// user_load.h — what each user has in flight: every estimate from its first byte to its
// answer, followers of an identical request included, bounded in count and in bytes
// (k_max_*_in_flight_per_user) so one user cannot take xmemd's memory. Loop thread only.
#ifndef XMEMD_USER_LOAD_H
#define XMEMD_USER_LOAD_H

#include "defaults.h"
#include "common/result.h"

#include <cstdint>
#include <map>
#include <sys/types.h>

namespace xmem::server
{

class UserLoads
{
  public:
    explicit UserLoads(int max_requests = k_max_requests_in_flight_per_user,
                       uint64_t max_bytes = k_max_request_bytes_in_flight_per_user)
        : m_max_requests(max_requests), m_max_bytes(max_bytes)
    {
    }
    // Counts one request of `bytes` against `uid`, or says (a user-facing line) which bound
    // it would cross; nothing is counted then.
    Result<bool> take(uid_t uid, uint64_t bytes);
    // The request counted by take() ended.
    void release(uid_t uid, uint64_t bytes);
    int requests(uid_t uid) const;
    uint64_t bytes(uid_t uid) const;
    std::size_t users() const { return m_load.size(); }

  private:
    struct Load {
        int requests = 0;
        uint64_t bytes = 0; // argv, env, cwd and script
    };
    int m_max_requests;
    uint64_t m_max_bytes;
    std::map<uid_t, Load> m_load;
};

} // namespace xmem::server
#endif
