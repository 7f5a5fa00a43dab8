#include "trace/json_lexer.h"

#include <cstring>

namespace xmem::trace
{

namespace
{

bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

int hex_value(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

void append_utf8(std::string &out, uint32_t code)
{
    if (code < 0x80) {
        out += static_cast<char>(code);
    } else if (code < 0x800) {
        out += static_cast<char>(0xC0 | (code >> 6));
        out += static_cast<char>(0x80 | (code & 0x3F));
    } else if (code < 0x10000) {
        out += static_cast<char>(0xE0 | (code >> 12));
        out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (code & 0x3F));
    } else {
        out += static_cast<char>(0xF0 | (code >> 18));
        out += static_cast<char>(0x80 | ((code >> 12) & 0x3F));
        out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (code & 0x3F));
    }
}

} // namespace

bool JsonLexer::fail(const char *why)
{
    if (m_error.empty()) {
        m_error_byte = static_cast<size_t>(m_at - m_begin) + 1;
        m_error = why;
    }
    return false;
}

// The common case, a string of plain ASCII without escapes, is one scan; anything else
// goes through string_slow, which validates and decodes byte by byte.
bool JsonLexer::string(std::string *out)
{
    const char *from = ++m_at; // past the opening quote
    while (m_at < m_end) {
        auto c = static_cast<unsigned char>(*m_at);
        if (c == '"') {
            if (out)
                out->assign(from, m_at);
            ++m_at;
            return true;
        }
        if (c == '\\' || c < 0x20 || c >= 0x80)
            return string_slow(from, out);
        ++m_at;
    }
    return fail("unterminated string");
}

bool JsonLexer::string_slow(const char *from, std::string *out)
{
    if (out)
        out->assign(from, m_at);
    while (m_at < m_end) {
        auto c = static_cast<unsigned char>(*m_at);
        if (c == '"') {
            ++m_at;
            return true;
        }
        if (c < 0x20)
            return fail("control character in a string (escape it)");
        if (c == '\\') {
            if (!escape(out))
                return false;
            continue;
        }
        const char *start = m_at;
        if (c >= 0x80 && !utf8_sequence())
            return false;
        if (c < 0x80)
            ++m_at;
        if (out)
            out->append(start, m_at);
    }
    return fail("unterminated string");
}

// At '\\': one escape, \uXXXX surrogate pairs included.
bool JsonLexer::escape(std::string *out)
{
    ++m_at;
    if (m_at == m_end)
        return fail("unterminated string");
    const char *simple = "\"\\/bfnrt";
    const char *decoded = "\"\\/\b\f\n\r\t";
    if (const char *hit = std::strchr(simple, *m_at); hit && *m_at) {
        if (out)
            *out += decoded[hit - simple];
        ++m_at;
        return true;
    }
    if (*m_at != 'u')
        return fail("invalid escape in a string");
    auto read_hex = [this](uint32_t &code) {
        if (m_end - m_at < 5)
            return fail("truncated \\u escape");
        code = 0;
        for (int i = 1; i <= 4; ++i) {
            int v = hex_value(m_at[i]);
            if (v < 0)
                return fail("invalid \\u escape");
            code = code * 16 + static_cast<uint32_t>(v);
        }
        m_at += 5;
        return true;
    };
    uint32_t code = 0;
    if (!read_hex(code))
        return false;
    if (code >= 0xDC00 && code <= 0xDFFF)
        return fail("lone low surrogate in a \\u escape");
    if (code >= 0xD800 && code <= 0xDBFF) {
        uint32_t low = 0;
        if (m_end - m_at < 2 || m_at[0] != '\\' || m_at[1] != 'u')
            return fail("high surrogate without its low half in a \\u escape");
        ++m_at;
        if (!read_hex(low))
            return false;
        if (low < 0xDC00 || low > 0xDFFF)
            return fail("high surrogate without its low half in a \\u escape");
        code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
    }
    if (out)
        append_utf8(*out, code);
    return true;
}

// At a byte >= 0x80: one well-formed UTF-8 sequence (no overlong forms, no surrogates,
// nothing above U+10FFFF).
bool JsonLexer::utf8_sequence()
{
    auto c = static_cast<unsigned char>(*m_at);
    unsigned char low = 0x80, high = 0xBF;
    int more = 0;
    if (c >= 0xC2 && c <= 0xDF) {
        more = 1;
    } else if (c >= 0xE0 && c <= 0xEF) {
        more = 2;
        low = c == 0xE0 ? 0xA0 : 0x80;
        high = c == 0xED ? 0x9F : 0xBF;
    } else if (c >= 0xF0 && c <= 0xF4) {
        more = 3;
        low = c == 0xF0 ? 0x90 : 0x80;
        high = c == 0xF4 ? 0x8F : 0xBF;
    } else {
        return fail("invalid UTF-8 in a string");
    }
    if (m_end - m_at <= more)
        return fail("truncated UTF-8 in a string");
    for (int i = 1; i <= more; ++i) {
        auto b = static_cast<unsigned char>(m_at[i]);
        if (b < (i == 1 ? low : 0x80) || b > (i == 1 ? high : 0xBF)) {
            m_at += i;
            return fail("invalid UTF-8 in a string");
        }
    }
    m_at += more + 1;
    return true;
}

// RFC 8259's number: -? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?
bool JsonLexer::number(JsonNumber &out)
{
    bool negative = peek() == '-';
    if (negative)
        ++m_at;
    if (!is_digit(peek()))
        return fail("invalid number");
    uint64_t value = 0;
    bool overflow = false;
    if (*m_at == '0') {
        ++m_at;
    } else {
        while (m_at < m_end && is_digit(*m_at)) {
            auto digit = static_cast<uint64_t>(*m_at - '0');
            overflow = overflow || value > (UINT64_MAX - digit) / 10;
            value = value * 10 + digit;
            ++m_at;
        }
    }
    bool integral = true;
    if (peek() == '.') {
        ++m_at;
        if (!is_digit(peek()))
            return fail("invalid number: no digit after '.'");
        while (m_at < m_end && is_digit(*m_at))
            ++m_at;
        integral = false;
    }
    if (peek() == 'e' || peek() == 'E') {
        ++m_at;
        if (peek() == '+' || peek() == '-')
            ++m_at;
        if (!is_digit(peek()))
            return fail("invalid number: no digit in the exponent");
        while (m_at < m_end && is_digit(*m_at))
            ++m_at;
        integral = false;
    }
    out.value = value;
    out.kind = JsonNumber::other;
    if (integral && !overflow)
        out.kind = negative ? JsonNumber::negative_int : JsonNumber::unsigned_int;
    return true;
}

bool JsonLexer::literal(bool &is_null, bool &value)
{
    auto match = [this](const char *word, size_t length) {
        if (static_cast<size_t>(m_end - m_at) < length || std::memcmp(m_at, word, length) != 0)
            return false;
        m_at += length;
        return true;
    };
    is_null = false;
    value = false;
    if (match("true", 4))
        return value = true;
    if (match("false", 5))
        return true;
    if (match("null", 4))
        return is_null = true;
    return fail("invalid literal");
}

} // namespace xmem::trace
