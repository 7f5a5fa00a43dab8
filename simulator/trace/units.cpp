#include "trace/units.h"

#include <cmath>
#include <cstdio>

namespace xmem::trace
{

namespace
{

struct Suffix {
    std::string_view text;
    double factor;
};

constexpr double k_kib = 1024.0;
constexpr Suffix k_suffixes[] = {
    {"", 1.0},
    {"B", 1.0},
    {"K", k_kib},
    {"KiB", k_kib},
    {"KB", 1e3},
    {"M", k_kib *k_kib},
    {"MiB", k_kib *k_kib},
    {"MB", 1e6},
    {"G", k_kib *k_kib *k_kib},
    {"GiB", k_kib *k_kib *k_kib},
    {"GB", 1e9},
    {"T", k_kib *k_kib *k_kib *k_kib},
    {"TiB", k_kib *k_kib *k_kib *k_kib},
    {"TB", 1e12},
};

} // namespace

bool parse_byte_size(std::string_view text, uint64_t &out)
{
    size_t digits = text.find_first_not_of("0123456789.");
    std::string_view number = text.substr(0, digits);
    std::string_view suffix = digits == std::string_view::npos ? "" : text.substr(digits);
    if (number.empty() || number.size() > 30 || number.find('.') != number.rfind('.') ||
        number == ".")
        return false;
    for (const Suffix &s : k_suffixes) {
        if (suffix != s.text)
            continue;
        if (number.find('.') == std::string_view::npos && s.factor == 1.0) {
            // Plain bytes: exact integer parse, no floating point rounding.
            uint64_t value = 0;
            for (char c : number) {
                unsigned d = static_cast<unsigned>(c - '0');
                if (value > (UINT64_MAX - d) / 10)
                    return false;
                value = value * 10 + d;
            }
            if (value == 0)
                return false;
            out = value;
            return true;
        }
        double value = std::strtod(std::string(number).c_str(), nullptr) * s.factor;
        if (!(value >= 1.0) || value >= 18446744073709551616.0)
            return false;
        out = static_cast<uint64_t>(value);
        return true;
    }
    return false;
}

std::string format_bytes(uint64_t bytes)
{
    static const char *const units[] = {"KiB", "MiB", "GiB", "TiB", "PiB"};
    if (bytes < 1024)
        return std::to_string(bytes) + " B";
    double value = static_cast<double>(bytes) / 1024.0;
    int unit = 0;
    while (value >= 1024.0 && unit < 4) {
        value /= 1024.0;
        ++unit;
    }
    char text[40];
    std::snprintf(text, sizeof text, "%.2f %s", value, units[unit]);
    return text;
}

} // namespace xmem::trace
