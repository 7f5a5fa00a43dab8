// LineSource: hands out the lines of a FILE* as string_views into one large buffer.
// Why: the compact reader must not be the bottleneck of a 10 M events/s replay, so it reads
// 1 MiB at a time with fread and finds line ends with memchr; no iostreams, no per-line
// allocation. A line is valid until the next call.
#pragma once

#include "trace/records.h"

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string_view>

namespace xmem::trace
{

class LineSource
{
  public:
    static constexpr size_t k_max_line = k_max_line_bytes; // trace/records.h
    // Reads start at 64 KiB and grow to 1 MiB once the input proves large, so a small trace
    // (tests, fuzzing, tiny jobs) does not pay for a 1 MiB buffer.
    static constexpr size_t k_first_chunk = 64 << 10;
    static constexpr size_t k_chunk = 1 << 20;

    enum class Status { line, end, too_long, no_newline, read_error };

    explicit LineSource(std::FILE *file);

    // On Status::line, `out` is the line without its '\n'. line_number() is the number of
    // the line just returned (or of the offending line for too_long / no_newline).
    Status next(std::string_view &out);
    uint64_t line_number() const { return m_line; }

  private:
    bool refill();

    std::FILE *m_file;
    void grow();

    // new char[] rather than std::vector: a vector would zero the buffer for nothing.
    std::unique_ptr<char[]> m_buffer;
    size_t m_capacity; // chunk + one maximal line, so a line never straddles two refills
    const char *m_pos;
    const char *m_end;
    uint64_t m_line = 0;
    bool m_eof = false;
    bool m_error = false;
};

} // namespace xmem::trace
