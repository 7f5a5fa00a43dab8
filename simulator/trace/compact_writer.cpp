#include "trace/compact_writer.h"

#include <cerrno>
#include <cstring>

namespace xmem::trace
{

namespace
{
constexpr size_t k_buffer_bytes = 1 << 20;

bool single_line(std::string_view text)
{
    return text.find('\n') == std::string_view::npos;
}
} // namespace

Result<CompactTraceWriter> CompactTraceWriter::create(const std::string &path)
{
    std::FILE *file = std::fopen(path.c_str(), "wb");
    if (!file)
        return Result<CompactTraceWriter>::fail("xmem: " + path +
                                                ": cannot create trace: " + std::strerror(errno));
    CompactTraceWriter writer(file, path);
    writer.m_owns_file = true;
    return Result<CompactTraceWriter>::ok(std::move(writer));
}

CompactTraceWriter::CompactTraceWriter(std::FILE *file, std::string name)
    : m_file(file), m_owns_file(false), m_name(std::move(name)), m_buffer(k_buffer_bytes)
{
    encode().version_line();
}

CompactTraceWriter::CompactTraceWriter(CompactTraceWriter &&other) noexcept
    : m_file(other.m_file), m_owns_file(other.m_owns_file), m_name(std::move(other.m_name)),
      m_buffer(std::move(other.m_buffer)), m_used(other.m_used), m_live(std::move(other.m_live)),
      m_strings(std::move(other.m_strings)), m_allocs(other.m_allocs), m_frees(other.m_frees),
      m_live_bytes(other.m_live_bytes), m_records(other.m_records), m_iteration(other.m_iteration),
      m_seen_alloc(other.m_seen_alloc), m_finished(other.m_finished),
      m_error(std::move(other.m_error))
{
    other.m_file = nullptr;
    other.m_owns_file = false;
    other.m_finished = true;
}

CompactTraceWriter::~CompactTraceWriter()
{
    if (m_owns_file && m_file)
        std::fclose(m_file);
}

void CompactTraceWriter::fail(const std::string &what)
{
    if (!failed())
        m_error = "xmem: " + m_name + ": trace writer: " + what;
}

void CompactTraceWriter::flush()
{
    if (m_used && m_file && std::fwrite(m_buffer.data(), 1, m_used, m_file) != m_used)
        fail(std::string("write failed: ") + std::strerror(errno));
    m_used = 0;
}

void CompactTraceWriter::put(std::string_view text)
{
    if (m_used + text.size() > m_buffer.size())
        flush();
    if (text.size() > m_buffer.size()) {
        fail("record too long");
        return;
    }
    std::memcpy(m_buffer.data() + m_used, text.data(), text.size());
    m_used += text.size();
}

void CompactTraceWriter::metadata(std::string_view key, std::string_view value)
{
    bool key_ok = !key.empty() && key.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_") ==
                                      std::string_view::npos;
    if (m_seen_alloc)
        fail("metadata after the first allocation");
    else if (!key_ok)
        fail("metadata key must match [a-z0-9_]+");
    else if (!single_line(value))
        fail("metadata value contains a newline");
    if (failed())
        return;
    record().metadata(key, value);
}

void CompactTraceWriter::string(uint64_t id, std::string_view text)
{
    if (id == 0 || !m_strings.insert(id).second)
        fail("string id " + std::to_string(id) + " is 0 or defined twice");
    else if (!single_line(text))
        fail("string text contains a newline");
    if (failed())
        return;
    record().string(id, text);
}

void CompactTraceWriter::kernel(std::string_view text)
{
    if (text.find(' ') == std::string_view::npos)
        fail("K record needs a module and a kind");
    else if (!single_line(text))
        fail("K record text contains a newline");
    if (failed())
        return;
    record().kernel(text);
}

void CompactTraceWriter::alloc(uint64_t id, uint64_t bytes, Device dev, uint64_t stream,
                               uint64_t ctx)
{
    if (bytes == 0)
        fail("allocation of 0 bytes (storage id " + std::to_string(id) + ")");
    else if (ctx != 0 && m_strings.count(ctx) == 0)
        fail("ctx string id " + std::to_string(ctx) + " is not defined");
    else if (!m_live.insert(id, bytes))
        fail("storage id " + std::to_string(id) + " is already live");
    if (failed())
        return;
    ++m_allocs;
    m_live_bytes += bytes;
    m_seen_alloc = true;
    record().alloc(id, bytes, dev == Device::gpu ? k_dev_gpu : k_dev_host, stream, ctx);
}

void CompactTraceWriter::free(uint64_t id)
{
    uint64_t bytes = 0;
    if (!m_live.erase(id, &bytes))
        fail("free of storage id " + std::to_string(id) + " that is not live");
    if (failed())
        return;
    ++m_frees;
    m_live_bytes -= bytes;
    record().free(id);
}

void CompactTraceWriter::record_stream(uint64_t id, uint64_t stream)
{
    if (!m_live.find(id))
        fail("record_stream of storage id " + std::to_string(id) + " that is not live");
    if (failed())
        return;
    record().record_stream(id, stream);
}

void CompactTraceWriter::empty_cache()
{
    if (failed())
        return;
    record().empty_cache();
}

void CompactTraceWriter::set_fraction(double fraction)
{
    if (!(fraction >= 0.0 && fraction <= 1.0))
        fail("memory fraction outside [0, 1]");
    if (failed())
        return;
    record().fraction(fraction);
}

void CompactTraceWriter::iteration(uint32_t n)
{
    if (n <= m_iteration)
        fail("iteration " + std::to_string(n) + " does not follow " + std::to_string(m_iteration));
    if (failed())
        return;
    m_iteration = n;
    record().iteration(n);
}

void CompactTraceWriter::phase(Phase phase)
{
    if (failed())
        return;
    record().phase(phase_name(phase));
}

Result<uint64_t> CompactTraceWriter::finish()
{
    if (m_finished)
        return Result<uint64_t>::fail("xmem: " + m_name + ": trace writer: finish() called twice");
    m_finished = true;
    if (!failed()) {
        record().totals(m_allocs, m_frees, m_live_bytes);
    }
    flush();
    if (m_file && std::fflush(m_file) != 0)
        fail(std::string("flush failed: ") + std::strerror(errno));
    if (m_owns_file && m_file) {
        if (std::fclose(m_file) != 0)
            fail(std::string("close failed: ") + std::strerror(errno));
        m_file = nullptr;
    }
    if (failed())
        return Result<uint64_t>::fail(m_error);
    return Result<uint64_t>::ok(m_records);
}

} // namespace xmem::trace
