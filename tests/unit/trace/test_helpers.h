// Shared helpers for the trace unit tests: cmocka include order, in-memory FILE*s and
// string assertions that print both sides.
#pragma once

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
// cmocka 1.1 declares its functions without extern "C".
extern "C" {
#include <cmocka.h>
}
// cmocka's fail() macro would rewrite every Result<T>::fail(...) in the headers below.
#undef fail

#include <cstdio>
#include <cstring>
#include <string>

namespace xmem::test {

// A read-only FILE* over a copy of `text` (tmpfile, so empty inputs work too).
inline std::FILE *file_with(const std::string &text)
{
    std::FILE *f = std::tmpfile();
    assert_non_null(f);
    if (!text.empty())
        assert_int_equal(std::fwrite(text.data(), 1, text.size(), f), text.size());
    std::rewind(f);
    return f;
}

inline std::string read_all(std::FILE *f)
{
    std::string out;
    char buf[4096];
    std::rewind(f);
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0)
        out.append(buf, n);
    return out;
}

inline bool contains(const std::string &haystack, const std::string &needle)
{
    if (haystack.find(needle) != std::string::npos)
        return true;
    print_error("expected to find \"%s\" in \"%s\"\n", needle.c_str(), haystack.c_str());
    return false;
}

} // namespace xmem::test

#define assert_contains(haystack, needle) assert_true(xmem::test::contains((haystack), (needle)))
