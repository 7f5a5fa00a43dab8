// CompactTraceReader: streaming reader of xmem's compact trace (docs/trace-format.md).
//
//   auto reader = CompactTraceReader::open("run.xtrace");     // Result<CompactTraceReader>
//   TraceEvent ev;
//   for (;;) {
//       auto more = reader.value().next(ev);                    // Result<bool>
//       if (!more.ok()) { report(more.error().message); break; }  // "xmem: FILE:LINE: ..."
//       if (!more.value()) break;                               // clean end, Z totals checked
//       switch (ev.kind) { ... }
//   }
//
// M, S and K records are absorbed by the reader (metadata(), string_text(), kernels()); every
// other record becomes one TraceEvent. Header metadata (the M lines before the first other
// record) is available right after open(). Memory is proportional to the live storage ids
// and the interned strings, never to the number of events. After an error, next() keeps
// returning it.
#pragma once

#include "common/result.h"
#include "trace/event.h"
#include "trace/flat_map.h"
#include "trace/line_source.h"

#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace xmem::trace
{

class CompactTraceReader
{
  public:
    // `name` is used in error messages; open(path) uses the path.
    static Result<CompactTraceReader> open(const std::string &path);
    // Reads from a FILE* the caller keeps ownership of (e.g. stdin).
    static Result<CompactTraceReader> open(std::FILE *file, const std::string &name);

    CompactTraceReader(CompactTraceReader &&) noexcept;
    CompactTraceReader &operator=(CompactTraceReader &&) noexcept;
    ~CompactTraceReader();

    // true: `event` holds the next event; false: the trace ended cleanly after its Z line.
    Result<bool> next(TraceEvent &event);

    const std::string &name() const;
    const std::vector<std::pair<std::string, std::string>> &metadata() const;
    // nullptr if the key was not given.
    const std::string *metadata_value(std::string_view key) const;
    // The K records read so far (text after "K "), in trace order.
    const std::vector<std::string> &kernels() const;
    // nullptr if the string id has not been defined (yet).
    const std::string *string_text(uint64_t id) const;
    // Totals so far: A records, F records, bytes of live storages (all devices).
    uint64_t allocs() const;
    uint64_t frees() const;
    uint64_t live_bytes() const;
    size_t live_count() const;

  private:
    struct State;
    explicit CompactTraceReader(std::unique_ptr<State> state);
    std::unique_ptr<State> m_state;
};

} // namespace xmem::trace
