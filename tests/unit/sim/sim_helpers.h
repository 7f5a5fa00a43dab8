// Shared helpers for the allocator tests: building an allocator from a release and a
// PYTORCH_CUDA_ALLOC_CONF string, and assertions that print both values in decimal.
#pragma once

// The simulator's headers come first: CMocka defines a fail() macro that would rewrite
// Result::fail.
#include "allocator/allocator.h"

// clang-format off
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
// cmocka 1.1 declares its functions without extern "C".
extern "C" {
#include <cmocka.h>
}
// clang-format on

#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace simtest
{

using namespace xmem::sim;

constexpr uint64_t MiB = 1048576;
constexpr uint64_t GiB = 1024 * MiB;

#define EXPECT_U64(actual, expected)                                                               \
    do {                                                                                           \
        const unsigned long long a_ = static_cast<unsigned long long>(actual);                     \
        const unsigned long long e_ = static_cast<unsigned long long>(expected);                   \
        if (a_ != e_) {                                                                            \
            print_error("%s:%d: %s = %llu, expected %s = %llu\n", __FILE__, __LINE__, #actual, a_, \
                        #expected, e_);                                                            \
            fail();                                                                                \
        }                                                                                          \
    } while (0)

#define EXPECT_I64(actual, expected)                                                               \
    do {                                                                                           \
        const long long a_ = static_cast<long long>(actual);                                       \
        const long long e_ = static_cast<long long>(expected);                                     \
        if (a_ != e_) {                                                                            \
            print_error("%s:%d: %s = %lld, expected %s = %lld\n", __FILE__, __LINE__, #actual, a_, \
                        #expected, e_);                                                            \
            fail();                                                                                \
        }                                                                                          \
    } while (0)

#define EXPECT_STR(actual, expected)                                                               \
    do {                                                                                           \
        const std::string a_ = (actual);                                                           \
        const std::string e_ = (expected);                                                         \
        if (a_ != e_) {                                                                            \
            print_error("%s:%d: %s =\n  '%s'\nexpected\n  '%s'\n", __FILE__, __LINE__, #actual,    \
                        a_.c_str(), e_.c_str());                                                   \
            fail();                                                                                \
        }                                                                                          \
    } while (0)

#define EXPECT_CONTAINS(haystack, needle)                                                          \
    do {                                                                                           \
        const std::string h_ = (haystack);                                                         \
        const std::string n_ = (needle);                                                           \
        if (h_.find(n_) == std::string::npos) {                                                    \
            print_error("%s:%d: '%s' does not contain '%s'\n", __FILE__, __LINE__, h_.c_str(),     \
                        n_.c_str());                                                               \
            fail();                                                                                \
        }                                                                                          \
    } while (0)

#define EXPECT_OK(result)                                                                          \
    do {                                                                                           \
        const auto &r_ = (result);                                                                 \
        if (!r_.ok()) {                                                                            \
            print_error("%s:%d: %s failed: %s\n", __FILE__, __LINE__, #result,                     \
                        r_.error().message.c_str());                                               \
            fail();                                                                                \
        }                                                                                          \
    } while (0)

inline TorchVersion version(const char *s)
{
    auto v = TorchVersion::parse(s);
    if (!v) {
        print_error("bad version %s: %s\n", s, v.error().message.c_str());
        fail();
    }
    return v.value();
}

inline AllocatorConfig config(const char *torch, const char *conf = "", uint64_t total = 0)
{
    auto cfg = AllocatorConfig::parse(conf, version(torch));
    if (!cfg) {
        print_error("bad config '%s': %s\n", conf, cfg.error().message.c_str());
        fail();
    }
    AllocatorConfig c = cfg.value();
    c.device_total_bytes = total;
    return c;
}

inline std::unique_ptr<DeviceCachingAllocator> make(const char *torch, const char *conf = "",
                                                    uint64_t total = 0)
{
    return std::make_unique<DeviceCachingAllocator>(config(torch, conf, total));
}

inline int64_t stat(const DeviceCachingAllocator &a, const char *key)
{
    int64_t v = 0;
    if (!a.stats().get(key, &v)) {
        print_error("no stat '%s' for torch %s\n", key, a.config().torch.str().c_str());
        fail();
    }
    return v;
}

// malloc that must succeed; returns the pointer.
inline uint64_t must_malloc(DeviceCachingAllocator &a, uint64_t size, StreamId stream = 0)
{
    MallocResult r = a.malloc(size, stream);
    if (!r.ok) {
        print_error("malloc(%llu, stream %llu) failed: %s\n", static_cast<unsigned long long>(size),
                    static_cast<unsigned long long>(stream), r.oom_message.c_str());
        fail();
    }
    return r.ptr;
}

inline void must_free(DeviceCachingAllocator &a, uint64_t ptr)
{
    EXPECT_OK(a.free(ptr));
}

inline void must_hold_invariants(const DeviceCachingAllocator &a)
{
    EXPECT_OK(a.check_invariants());
}

// Records every trace entry.
struct Recorder : TraceObserver {
    std::vector<TraceEntry> entries;
    void on_trace(const TraceEntry &e) override { entries.push_back(e); }
    std::string actions() const
    {
        std::string s;
        for (const TraceEntry &e : entries)
            s += std::string(s.empty() ? "" : " ") + to_string(e.action);
        return s;
    }
};

} // namespace simtest
