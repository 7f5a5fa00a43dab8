// cache.h — estimates by cache key, with an expiry and an LRU bound so memory stays flat.
// Thread-safe: worker threads look up hits right after computing the key (one mutex, held
// for a hash lookup and a list splice).
#ifndef XMEMD_CACHE_H
#define XMEMD_CACHE_H

#include "verdict.h"

#include <list>
#include <mutex>
#include <string>
#include <unordered_map>

namespace xmem::server
{

class Cache
{
  public:
    Cache(int ttl_seconds, int max_entries) { configure(ttl_seconds, max_entries); }
    void configure(int ttl_seconds, int max_entries);
    // Copies the entry into *out when present and not expired at `now`.
    bool get(const std::string &key, long now, Estimate *out);
    void put(const std::string &key, const Estimate &e, long now);
    void clear();
    std::size_t size() const
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        return m_map.size();
    }

  private:
    struct Entry {
        Estimate estimate;
        long expires;
        std::list<std::string>::iterator lru;
    };
    void evict_to(std::size_t n); // caller holds m_mutex
    mutable std::mutex m_mutex;
    long m_ttl = 0;
    std::size_t m_max = 0;
    std::list<std::string> m_lru; // front = most recently used
    std::unordered_map<std::string, Entry> m_map;
};

} // namespace xmem::server
#endif
