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

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>

namespace xmem::test
{

// A read-only FILE* over a copy of `text`, in memory (fopencookie: no file system work, so
// the fuzz tests' thousands of inputs stay fast under ASan; empty inputs work too).
struct MemoryCookie {
    std::string data;
    size_t pos = 0;
};

inline ssize_t memory_read(void *cookie, char *buf, size_t size)
{
    auto *c = static_cast<MemoryCookie *>(cookie);
    size_t n = std::min(size, c->data.size() - c->pos);
    std::memcpy(buf, c->data.data() + c->pos, n);
    c->pos += n;
    return static_cast<ssize_t>(n);
}

inline int memory_close(void *cookie)
{
    delete static_cast<MemoryCookie *>(cookie);
    return 0;
}

inline std::FILE *file_with(const std::string &text)
{
    cookie_io_functions_t io{memory_read, nullptr, nullptr, memory_close};
    std::FILE *f = fopencookie(new MemoryCookie{text, 0}, "r", io);
    assert_non_null(f);
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
