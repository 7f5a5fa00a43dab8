// Byte sizes as people write and read them (`--capacity 40G`, "12.50 GiB").
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace xmem::trace
{

// Accepts plain bytes ("1073741824") or a number (decimals allowed) with a suffix:
// K M G T, KiB MiB GiB TiB (all binary, 1024-based) or KB MB GB TB (decimal, 1000-based).
// Returns false for anything else, including 0 and values above 2^64 - 1.
bool parse_byte_size(std::string_view text, uint64_t &out);

// "512 B", "40.00 KiB", "1.50 MiB", "12.34 GiB": binary units, two decimals.
std::string format_bytes(uint64_t bytes);

} // namespace xmem::trace
