#include "analysis/workload.h"

#include "trace/compact_reader.h"
#include "trace/compact_writer.h"

#include <unordered_set>

namespace xmem::analysis
{

std::string_view Workload::ctx_text(uint64_t ctx) const
{
    auto it = m_strings.find(ctx);
    return it == m_strings.end() ? std::string_view() : std::string_view(it->second);
}

uint64_t Workload::intern(std::string_view text)
{
    auto it = m_ids_by_text.find(std::string(text));
    if (it != m_ids_by_text.end())
        return it->second;
    uint64_t id = ++m_max_string;
    define_string(id, std::string(text));
    return id;
}

void Workload::define_string(uint64_t id, std::string text)
{
    if (id > m_max_string)
        m_max_string = id;
    m_ids_by_text.emplace(text, id);
    m_strings[id] = std::move(text);
}

std::string_view Workload::meta_value(std::string_view key) const
{
    auto it = meta.find(key);
    return it == meta.end() ? std::string_view() : std::string_view(it->second);
}

bool Workload::inserted_by_xmem(const TraceEvent &ev) const
{
    return ctx_text(ev.ctx).substr(0, k_xmem_ctx_prefix.size()) == k_xmem_ctx_prefix;
}

Result<Workload> load_workload(const std::string &path)
{
    auto opened = trace::CompactTraceReader::open(path);
    if (!opened.ok())
        return Result<Workload>::fail(opened.error());
    trace::CompactTraceReader &reader = opened.value();
    Workload work;
    TraceEvent ev;
    for (;;) {
        auto more = reader.next(ev);
        if (!more.ok())
            return Result<Workload>::fail(more.error());
        if (!more.value())
            break;
        if (ev.kind == EventKind::alloc) {
            work.note_id(ev.id);
            // Strings are defined before first use, so the text is there now.
            if (ev.ctx != 0 && work.ctx_text(ev.ctx).empty()) {
                const std::string *text = reader.string_text(ev.ctx);
                if (text)
                    work.define_string(ev.ctx, *text);
            }
        }
        work.events.push_back(ev);
    }
    work.kernels = reader.kernels();
    for (const auto &[key, value] : reader.metadata())
        work.meta[key] = value;
    return Result<Workload>::ok(std::move(work));
}

Result<void> write_workload(const Workload &work, const std::string &path)
{
    auto created = trace::CompactTraceWriter::create(path);
    if (!created.ok())
        return Result<void>::fail(created.error().message);
    trace::CompactTraceWriter &w = created.value();
    for (const auto &[key, value] : work.meta)
        w.metadata(key, value);
    for (const std::string &k : work.kernels)
        w.kernel(k);
    std::unordered_set<uint64_t> written;
    for (const TraceEvent &ev : work.events) {
        switch (ev.kind) {
        case EventKind::alloc:
            if (ev.ctx != 0 && written.insert(ev.ctx).second)
                w.string(ev.ctx, work.ctx_text(ev.ctx));
            w.alloc(ev.id, ev.bytes, ev.dev, ev.stream, ev.ctx);
            break;
        case EventKind::free:
            w.free(ev.id);
            break;
        case EventKind::record_stream:
            w.record_stream(ev.id, ev.stream);
            break;
        case EventKind::empty_cache:
            w.empty_cache();
            break;
        case EventKind::set_fraction:
            w.set_fraction(ev.fraction);
            break;
        case EventKind::iteration:
            w.iteration(ev.iteration);
            break;
        case EventKind::phase:
            w.phase(ev.phase);
            break;
        }
    }
    auto done = w.finish();
    if (!done.ok())
        return Result<void>::fail(done.error().message);
    return Result<void>::success();
}

TraceEvent make_alloc(uint64_t id, uint64_t bytes, uint64_t ctx, const TraceEvent &like)
{
    TraceEvent ev;
    ev.kind = EventKind::alloc;
    ev.dev = Device::gpu;
    ev.phase = like.phase;
    ev.iteration = like.iteration;
    ev.id = id;
    ev.bytes = bytes;
    ev.stream = 0;
    ev.ctx = ctx;
    ev.line = like.line;
    return ev;
}

TraceEvent make_free(uint64_t id, uint64_t bytes, const TraceEvent &like)
{
    TraceEvent ev = make_alloc(id, bytes, 0, like);
    ev.kind = EventKind::free;
    return ev;
}

} // namespace xmem::analysis
