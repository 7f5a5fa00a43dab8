#include "trace_writer.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

namespace xmem::capture
{

namespace
{
// Large enough that a resnet50 iteration (~6.6k events, ~120 KiB) costs a handful of writes.
constexpr size_t k_buffer_bytes = 1 << 20;
// Text fields are cut here so that a line stays within trace::k_max_line_bytes, with room
// for the letter, an id or key, and the separators.
constexpr size_t k_max_text = trace::k_max_line_bytes - 96;

bool write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = ::write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return false;
        }
        p += w;
        n -= static_cast<size_t>(w);
    }
    return true;
}

// Metadata keys and interned strings are single-line text; a newline would split a record.
std::string one_line(std::string_view s)
{
    std::string out(s.substr(0, k_max_text));
    for (char &c : out)
        if (c == '\n' || c == '\r')
            c = ' ';
    return out;
}
} // namespace

TraceWriter::~TraceWriter()
{
    // Deliberately no flush: only finish() produces a trace.
    if (m_fd >= 0)
        ::close(m_fd);
}

Result<void> TraceWriter::open(const std::string &final_path)
{
    m_final_path = final_path;
    m_spool_path = final_path + ".spool";
    m_fd = ::open(m_spool_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (m_fd < 0) {
        return Result<void>::fail("xmem: " + m_spool_path + ": " + std::strerror(errno) +
                                  " (is the directory of --out writable?)");
    }
    m_buf.assign(k_buffer_bytes, 0);
    m_used = 0;
    return Result<void>::success();
}

void TraceWriter::meta(std::string_view key, std::string_view value)
{
    for (auto &kv : m_meta) {
        if (kv.first == key) {
            kv.second = one_line(value);
            return;
        }
    }
    m_meta.emplace_back(std::string(key), one_line(value));
}

bool TraceWriter::flush()
{
    if (m_used == 0 || m_io_error)
        return !m_io_error;
    if (!write_all(m_fd, m_buf.data(), m_used)) {
        m_io_error = true;
        m_saved_errno = errno;
    }
    m_used = 0;
    return !m_io_error;
}

void TraceWriter::put(std::string_view s)
{
    if (m_used + s.size() > m_buf.size())
        flush();
    if (s.size() > m_buf.size()) { // cannot happen for bounded records; keep it safe anyway
        if (!write_all(m_fd, s.data(), s.size()))
            m_io_error = true;
        return;
    }
    std::memcpy(m_buf.data() + m_used, s.data(), s.size());
    m_used += s.size();
}

void TraceWriter::string_def(uint32_t id, std::string_view text)
{
    if (m_fd < 0)
        return;
    encode().string(id, one_line(text));
}

void TraceWriter::kernel(std::string_view text)
{
    if (m_fd < 0)
        return;
    encode().kernel(one_line(text));
}

void TraceWriter::alloc(uint64_t id, uint64_t bytes, char dev, uint32_t ctx)
{
    if (m_fd < 0)
        return;
    encode().alloc(id, bytes, dev == trace::k_dev_host ? trace::k_dev_host : trace::k_dev_gpu, 0,
                   ctx);
}

void TraceWriter::free(uint64_t id)
{
    if (m_fd < 0)
        return;
    encode().free(id);
}

void TraceWriter::iteration(uint64_t n)
{
    if (m_fd < 0)
        return;
    encode().iteration(n);
}

void TraceWriter::phase(std::string_view name)
{
    if (m_fd < 0)
        return;
    encode().phase(name);
}

void TraceWriter::empty_cache()
{
    if (m_fd >= 0)
        encode().empty_cache();
}

void TraceWriter::memory_fraction(double fraction)
{
    if (m_fd < 0)
        return;
    // Plain decimal, no sign or exponent (what the simulator's reader accepts).
    if (!(fraction >= 0.0))
        fraction = 0.0;
    if (fraction > 1.0)
        fraction = 1.0;
    encode().fraction(fraction);
}

Result<void> TraceWriter::finish(uint64_t allocs, uint64_t frees, uint64_t live_bytes)
{
    if (m_fd < 0) {
        return Result<void>::fail("xmem: trace was not opened");
    }
    encode().totals(allocs, frees, live_bytes);
    bool ok = flush();
    ::close(m_fd);
    m_fd = -1;
    if (!ok) {
        std::string message = "xmem: " + m_spool_path + ": " + std::strerror(m_saved_errno);
        abandon();
        return Result<void>::fail(std::move(message));
    }

    std::string tmp_path = m_final_path + ".tmp";
    int out = ::open(tmp_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    int in = ::open(m_spool_path.c_str(), O_RDONLY | O_CLOEXEC);
    trace::StringSink head;
    trace::RecordEncoder<trace::StringSink> header(head);
    header.version_line();
    for (const auto &kv : m_meta)
        header.metadata(kv.first, kv.second);
    ok = out >= 0 && in >= 0 && write_all(out, head.text.data(), head.text.size());
    while (ok) {
        ssize_t n = ::read(in, m_buf.data(), m_buf.size());
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            ok = n == 0;
            break;
        }
        ok = write_all(out, m_buf.data(), static_cast<size_t>(n));
    }
    int saved = errno;
    if (out >= 0 && ::close(out) != 0)
        ok = false;
    if (in >= 0)
        ::close(in);
    ::unlink(m_spool_path.c_str());
    if (ok && ::rename(tmp_path.c_str(), m_final_path.c_str()) != 0) {
        saved = errno;
        ok = false;
    }
    if (!ok) {
        std::string message =
            "xmem: " + m_final_path + ": " + std::strerror(saved) + " (is there room on the disk?)";
        ::unlink(tmp_path.c_str());
        return Result<void>::fail(std::move(message));
    }
    return Result<void>::success();
}

void TraceWriter::abandon()
{
    if (m_fd >= 0)
        ::close(m_fd);
    m_fd = -1;
    if (!m_spool_path.empty())
        ::unlink(m_spool_path.c_str());
}

} // namespace xmem::capture
