// Shared helpers for the estimator tests: a builder for small traces written the way the
// profiler writes them, and assertions that print both values.
#pragma once

// xmem headers first: CMocka defines a fail() macro that would rewrite Result::fail.
#include "analysis/workload.h"

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

#include <string>
#include <vector>

namespace esttest
{

using namespace xmem::analysis;

constexpr uint64_t KiB = 1024;
constexpr uint64_t MiB = 1048576;

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

#define EXPECT_STR(actual, expected)                                                               \
    do {                                                                                           \
        const std::string a_(actual), e_(expected);                                                \
        if (a_ != e_) {                                                                            \
            print_error("%s:%d: %s = \"%s\", expected \"%s\"\n", __FILE__, __LINE__, #actual,      \
                        a_.c_str(), e_.c_str());                                                   \
            fail();                                                                                \
        }                                                                                          \
    } while (0)

#define EXPECT_CONTAINS(text, needle)                                                              \
    do {                                                                                           \
        const std::string t_(text), n_(needle);                                                    \
        if (t_.find(n_) == std::string::npos) {                                                    \
            print_error("%s:%d: \"%s\" does not contain \"%s\"\n", __FILE__, __LINE__, t_.c_str(), \
                        n_.c_str());                                                               \
            fail();                                                                                \
        }                                                                                          \
    } while (0)

// Builds a Workload event by event, tracking the iteration and phase like the trace does.
class Builder
{
  public:
    Builder &meta(const std::string &k, const std::string &v)
    {
        m_work.meta[k] = v;
        return *this;
    }
    Builder &iteration(uint32_t n)
    {
        m_iteration = n;
        TraceEvent ev = base(EventKind::iteration);
        m_work.events.push_back(ev);
        return *this;
    }
    Builder &phase(Phase p)
    {
        m_phase = p;
        m_work.events.push_back(base(EventKind::phase));
        return *this;
    }
    Builder &alloc(uint64_t id, uint64_t bytes, const std::string &ctx = "",
                   Device dev = Device::gpu)
    {
        TraceEvent ev = base(EventKind::alloc);
        ev.id = id;
        ev.bytes = bytes;
        ev.dev = dev;
        ev.ctx = ctx.empty() ? 0 : m_work.intern(ctx);
        m_work.note_id(id);
        m_bytes.resize(std::max<size_t>(m_bytes.size(), id + 1));
        m_bytes[id] = bytes;
        m_devs.resize(m_bytes.size());
        m_devs[id] = dev;
        m_work.events.push_back(ev);
        return *this;
    }
    Builder &host(uint64_t id, uint64_t bytes, const std::string &ctx = "")
    {
        return alloc(id, bytes, ctx, Device::host);
    }
    Builder &free(uint64_t id)
    {
        TraceEvent ev = base(EventKind::free);
        ev.id = id;
        ev.bytes = id < m_bytes.size() ? m_bytes[id] : 0;
        ev.dev = id < m_devs.size() ? m_devs[id] : Device::gpu;
        m_work.events.push_back(ev);
        return *this;
    }
    Workload build() { return m_work; }
    Workload &work() { return m_work; }

  private:
    TraceEvent base(EventKind kind) const
    {
        TraceEvent ev;
        ev.kind = kind;
        ev.iteration = m_iteration;
        ev.phase = m_phase;
        return ev;
    }
    Workload m_work;
    uint32_t m_iteration = 0;
    Phase m_phase = Phase::setup;
    std::vector<uint64_t> m_bytes;
    std::vector<Device> m_devs;
};

// "A12:100 F12 ..." summary of the alloc/free events (ids and bytes), for compact checks.
inline std::string summary(const Workload &w)
{
    std::string s;
    for (const TraceEvent &ev : w.events) {
        if (ev.kind == EventKind::alloc)
            s += "A" + std::to_string(ev.id) + ":" + std::to_string(ev.bytes) + " ";
        else if (ev.kind == EventKind::free)
            s += "F" + std::to_string(ev.id) + " ";
    }
    if (!s.empty())
        s.pop_back();
    return s;
}

// Total bytes allocated by events whose context starts with `prefix`.
inline uint64_t bytes_with_ctx(const Workload &w, const std::string &prefix)
{
    uint64_t total = 0;
    for (const TraceEvent &ev : w.events)
        if (ev.kind == EventKind::alloc && std::string(w.ctx_text(ev.ctx)).rfind(prefix, 0) == 0)
            total += ev.bytes;
    return total;
}

} // namespace esttest
