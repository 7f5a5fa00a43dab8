// sha256.h — SHA-256 (FIPS 180-4) for cache keys and config fingerprints; no crypto library
// is a dependency of xmemd, and the cache only needs collision resistance, not secrecy.
#ifndef XMEMD_SHA256_H
#define XMEMD_SHA256_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace xmem::server
{

class Sha256
{
  public:
    Sha256();
    void update(const void *data, std::size_t len);
    void update(std::string_view s) { update(s.data(), s.size()); }
    // Feeds a length-prefixed field so that ("ab","c") and ("a","bc") differ.
    void field(std::string_view s);
    std::string hex(); // finalizes; 64 lowercase hex digits

  private:
    void block(const uint8_t *p);
    uint32_t m_h[8];
    uint8_t m_buf[64];
    std::size_t m_used = 0;
    uint64_t m_total = 0;
};

std::string sha256_hex(std::string_view s);

} // namespace xmem::server
#endif
