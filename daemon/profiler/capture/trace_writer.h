// Writes docs/trace-format.md version 1, every record through the simulator's RecordEncoder
// (simulator/trace/records.h, header-only), so the capture spells no record of its own.
//
// Events stream into a spool file through a private 1 MiB buffer (plain write(2), never stdio,
// so a forked DataLoader worker that exits cannot flush half a buffer into our file).
// finish() writes the final file: header, metadata (known only at the end: steps, amp,
// zero_grad_set_to_none), the spooled events, and the Z totals line; then it renames it
// into place, so a reader never sees a truncated trace under the final name.
#pragma once

#include "common/result.h"
#include "trace/records.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace xmem::capture
{

class TraceWriter
{
  public:
    TraceWriter() = default;
    ~TraceWriter();
    TraceWriter(const TraceWriter &) = delete;
    TraceWriter &operator=(const TraceWriter &) = delete;

    // Opens FINAL_PATH.spool for the events; the error names the spool file and the fix.
    Result<void> open(const std::string &final_path);
    bool is_open() const { return m_fd >= 0; }

    // Metadata is kept in memory and written first by finish(); a repeated key replaces the
    // earlier value so the last word (e.g. the final thread count) wins.
    void meta(std::string_view key, std::string_view value);

    void string_def(uint32_t id, std::string_view text);
    void kernel(std::string_view text);
    void alloc(uint64_t id, uint64_t bytes, char dev, uint32_t ctx);
    void free(uint64_t id);
    void iteration(uint64_t n);
    void phase(std::string_view name);
    void empty_cache();
    void memory_fraction(double fraction);

    // Writes the final trace and removes the spool; fails on an I/O error.
    Result<void> finish(uint64_t allocs, uint64_t frees, uint64_t live_bytes);
    // Drops the spool without writing a trace (the capture failed).
    void abandon();

  private:
    friend class trace::RecordEncoder<TraceWriter>; // calls put()
    trace::RecordEncoder<TraceWriter> encode() { return trace::RecordEncoder<TraceWriter>(*this); }
    void put(std::string_view s);
    bool flush();

    int m_fd = -1;
    bool m_io_error = false;
    int m_saved_errno = 0;
    std::string m_final_path;
    std::string m_spool_path;
    std::vector<char> m_buf;
    size_t m_used = 0;
    std::vector<std::pair<std::string, std::string>> m_meta;
};

using trace::format_u64;

} // namespace xmem::capture
