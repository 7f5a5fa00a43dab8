// CompactTraceWriter: writes docs/trace-format.md (used by tests, the example generator and
// the estimator) through RecordEncoder (trace/records.h). It validates as it writes (live ids,
// defined strings, metadata first) so a trace it produces always reads back; the first violation is
// kept and reported by finish(), like ferror(), so call sites stay one line each. finish() writes
// the Z totals line.
#pragma once

#include "common/result.h"
#include "trace/event.h"
#include "trace/flat_map.h"
#include "trace/records.h"

#include <cstdio>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

namespace xmem::trace
{

class CompactTraceWriter
{
  public:
    static Result<CompactTraceWriter> create(const std::string &path);
    // Writes to a FILE* the caller keeps ownership of; `name` appears in errors.
    CompactTraceWriter(std::FILE *file, std::string name);
    CompactTraceWriter(CompactTraceWriter &&other) noexcept;
    CompactTraceWriter &operator=(CompactTraceWriter &&) = delete;
    ~CompactTraceWriter();

    void metadata(std::string_view key, std::string_view value);
    void string(uint64_t id, std::string_view text);
    // TEXT is everything after "K " (module, kind, key=value fields).
    void kernel(std::string_view text);
    void alloc(uint64_t id, uint64_t bytes, Device dev, uint64_t stream = 0, uint64_t ctx = 0);
    void free(uint64_t id);
    void record_stream(uint64_t id, uint64_t stream);
    void empty_cache();
    void set_fraction(double fraction);
    void iteration(uint32_t n);
    void phase(Phase phase);

    // Writes `Z allocs frees live_bytes`, flushes, closes an owned file. Returns the number
    // of records written, or the first error ("xmem: NAME: ...").
    Result<uint64_t> finish();

  private:
    friend class RecordEncoder<CompactTraceWriter>; // calls put()
    RecordEncoder<CompactTraceWriter> encode() { return RecordEncoder<CompactTraceWriter>(*this); }
    // The encoder for one more record (counted for finish()'s return value).
    RecordEncoder<CompactTraceWriter> record()
    {
        ++m_records;
        return encode();
    }
    bool failed() const { return !m_error.empty(); }
    void fail(const std::string &what);
    void put(std::string_view text);
    void flush();

    std::FILE *m_file;
    bool m_owns_file;
    std::string m_name;
    std::vector<char> m_buffer;
    size_t m_used = 0;
    FlatMap<uint64_t> m_live; // id -> bytes
    std::unordered_set<uint64_t> m_strings;
    uint64_t m_allocs = 0, m_frees = 0, m_live_bytes = 0, m_records = 0;
    uint32_t m_iteration = 0;
    bool m_seen_alloc = false;
    bool m_finished = false;
    std::string m_error;
};

} // namespace xmem::trace
