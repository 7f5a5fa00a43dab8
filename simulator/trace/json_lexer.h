// A small strict JSON lexer for the snapshot reader (RFC 8259: no comments, no trailing
// commas, no NaN, strings of valid UTF-8 without raw control characters). It exists for
// speed: a snapshot of a million entries is mostly short keys, small integers and `frames`
// nobody reads, and a general lexer spends its time building values the reader throws away.
// Here a string is only copied when the caller asks for it, and a number is only converted
// when it is an integer.
//
// Errors carry the 1-based byte offset of the offending byte (the length + 1 at the end of
// the input) and a short reason without control bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace xmem::trace
{

struct JsonNumber {
    // other: a fraction, an exponent or an integer beyond 64 bits (never converted).
    enum Kind { unsigned_int, negative_int, other };
    Kind kind = other;
    uint64_t value = 0; // unsigned_int: the value; negative_int: its magnitude
};

class JsonLexer
{
  public:
    JsonLexer(const char *begin, const char *end) : m_begin(begin), m_at(begin), m_end(end) {}

    void skip_space()
    {
        while (m_at < m_end && (*m_at == ' ' || *m_at == '\n' || *m_at == '\r' || *m_at == '\t'))
            ++m_at;
    }
    bool at_end() const { return m_at == m_end; }
    // The next byte, or 0 at the end (0 is never valid JSON outside a string).
    char peek() const { return m_at < m_end ? *m_at : '\0'; }
    void advance() { ++m_at; }

    // At '"': reads the string; OUT (if not null) receives its decoded text.
    bool string(std::string *out);
    // At '-' or a digit.
    bool number(JsonNumber &out);
    // At 't', 'f' or 'n': reads true, false or null into VALUE (null reads as false).
    bool literal(bool &is_null, bool &value);

    // Records a syntax error at the current byte; returns false.
    bool fail(const char *why);
    size_t error_byte() const { return m_error_byte; }
    const std::string &error() const { return m_error; }

  private:
    bool string_slow(const char *from, std::string *out);
    bool escape(std::string *out);
    bool utf8_sequence();

    const char *m_begin;
    const char *m_at;
    const char *m_end;
    size_t m_error_byte = 0;
    std::string m_error;
};

} // namespace xmem::trace
