// Field splitting and integer parsing for the compact trace: hand-written because they run
// once per field of every event (strtoull needs a terminated string and accepts signs and
// spaces the format forbids).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace xmem::trace
{

enum class NumberStatus { ok, empty, not_a_number, overflow };

inline NumberStatus parse_u64(std::string_view text, uint64_t &out)
{
    if (text.empty())
        return NumberStatus::empty;
    uint64_t value = 0;
    for (char c : text) {
        unsigned digit = static_cast<unsigned char>(c) - '0';
        if (digit > 9)
            return NumberStatus::not_a_number;
        if (value > (UINT64_MAX - digit) / 10)
            return NumberStatus::overflow;
        value = value * 10 + digit;
    }
    out = value;
    return NumberStatus::ok;
}

// Hot-path field parser: reads 1..19 digits at p (19 digits always fit in 64 bits, so
// no overflow check is needed) and the one separator after them (`sep`, or '\0' for the
// end of the line). Returns false on anything unusual; the caller then re-parses the line
// with the checked functions, which produce the exact error message.
inline bool fast_field(const char *&p, const char *end, char sep, uint64_t &out)
{
    const char *start = p;
    uint64_t value = 0;
    while (p < end) {
        unsigned digit = static_cast<unsigned char>(*p) - '0';
        if (digit > 9)
            break;
        value = value * 10 + digit;
        ++p;
    }
    size_t digits = static_cast<size_t>(p - start);
    if (digits == 0 || digits > 19)
        return false;
    if (sep == '\0') {
        if (p != end)
            return false;
    } else if (p == end || *p++ != sep) {
        return false;
    }
    out = value;
    return true;
}

// Splits `line` at single spaces into at most `max` fields. Returns the number of fields,
// or max + 1 when there are more. An empty field (two spaces, trailing space) is kept as an
// empty view so that the number parser can name it.
inline size_t split_fields(std::string_view line, std::string_view *fields, size_t max)
{
    size_t count = 0;
    size_t start = 0;
    for (;;) {
        size_t space = line.find(' ', start);
        if (count == max)
            return max + 1;
        if (space == std::string_view::npos) {
            fields[count++] = line.substr(start);
            return count;
        }
        fields[count++] = line.substr(start, space - start);
        start = space + 1;
    }
}

} // namespace xmem::trace
