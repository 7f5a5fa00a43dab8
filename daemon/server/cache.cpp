// cache.cpp — LRU list + hash map; expired entries are dropped when touched or evicted.
#include "cache.h"

namespace xmem::server
{

void Cache::configure(int ttl_seconds, int max_entries)
{
    std::lock_guard<std::mutex> lock(m_mutex);
    m_ttl = ttl_seconds;
    m_max = max_entries > 0 ? (std::size_t)max_entries : 0;
    evict_to(m_max);
}

bool Cache::get(const std::string &key, long now, Estimate *out)
{
    std::lock_guard<std::mutex> lock(m_mutex);
    auto it = m_map.find(key);
    if (it == m_map.end())
        return false;
    if (it->second.expires <= now) {
        m_lru.erase(it->second.lru);
        m_map.erase(it);
        return false;
    }
    m_lru.splice(m_lru.begin(), m_lru, it->second.lru);
    *out = it->second.estimate;
    return true;
}

void Cache::put(const std::string &key, const Estimate &e, long now)
{
    std::lock_guard<std::mutex> lock(m_mutex);
    if (m_max == 0 || m_ttl == 0)
        return;
    auto it = m_map.find(key);
    if (it != m_map.end()) {
        it->second.estimate = e;
        it->second.expires = now + m_ttl;
        m_lru.splice(m_lru.begin(), m_lru, it->second.lru);
        return;
    }
    evict_to(m_max - 1);
    m_lru.push_front(key);
    m_map.emplace(key, Entry{e, now + m_ttl, m_lru.begin()});
}

void Cache::clear()
{
    std::lock_guard<std::mutex> lock(m_mutex);
    m_map.clear();
    m_lru.clear();
}

void Cache::evict_to(std::size_t n)
{
    while (m_map.size() > n) {
        m_map.erase(m_lru.back());
        m_lru.pop_back();
    }
}

} // namespace xmem::server
