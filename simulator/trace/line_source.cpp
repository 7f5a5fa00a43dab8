#include "trace/line_source.h"

#include <cstring>

namespace xmem::trace
{

LineSource::LineSource(std::FILE *file)
    : m_file(file), m_buffer(new char[k_first_chunk + k_max_line + 1]),
      m_capacity(k_first_chunk + k_max_line + 1), m_pos(m_buffer.get()), m_end(m_buffer.get())
{
}

LineSource::Status LineSource::next(std::string_view &out)
{
    for (;;) {
        size_t left = static_cast<size_t>(m_end - m_pos);
        auto *newline = static_cast<const char *>(std::memchr(m_pos, '\n', left));
        if (newline) {
            out = std::string_view(m_pos, static_cast<size_t>(newline - m_pos));
            m_pos = newline + 1;
            ++m_line;
            return out.size() > k_max_line ? Status::too_long : Status::line;
        }
        if (left > k_max_line) {
            ++m_line;
            return Status::too_long;
        }
        if (m_eof) {
            if (left == 0)
                return m_error ? Status::read_error : Status::end;
            ++m_line;
            return Status::no_newline;
        }
        if (!refill() && m_error)
            return Status::read_error;
    }
}

void LineSource::grow()
{
    size_t left = static_cast<size_t>(m_end - m_pos);
    size_t capacity = k_chunk + k_max_line + 1;
    std::unique_ptr<char[]> bigger(new char[capacity]);
    std::memcpy(bigger.get(), m_pos, left);
    m_buffer = std::move(bigger);
    m_capacity = capacity;
    m_pos = m_buffer.get();
    m_end = m_pos + left;
}

// Moves the unread tail (< one line) to the front and appends up to one chunk.
bool LineSource::refill()
{
    if (m_capacity < k_chunk && m_end == m_buffer.get() + m_capacity)
        grow(); // the last read filled the small buffer: this is a large input
    size_t left = static_cast<size_t>(m_end - m_pos);
    char *base = m_buffer.get();
    std::memmove(base, m_pos, left);
    size_t got = std::fread(base + left, 1, m_capacity - left, m_file);
    m_pos = base;
    m_end = base + left + got;
    if (got == 0) {
        m_eof = true;
        m_error = std::ferror(m_file) != 0;
        return false;
    }
    return true;
}

} // namespace xmem::trace
