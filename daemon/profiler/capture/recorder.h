// The recorder turns allocator callbacks into trace records.
//
// It owns the table of live storages (pointer -> storage id and size), the running totals
// for the Z line, and the attribution state: iteration, phase, module path, and the device
// tag. It knows nothing of torch: the torch-facing hooks (torch_hooks.cpp) call it with raw
// pointers and op names, which keeps this part unit-testable without LibTorch.
//
// Thread safety: allocations arrive from every thread (OpenMP workers, the autograd engine,
// DataLoader pin threads), so every entry point takes one mutex. The device tag is
// thread-local because each Python thread runs its own device mode.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>
#include <string_view>
#include <unordered_map>

#include "common/result.h"
#include "trace_writer.h"

namespace xmem::capture
{

// gpu_explicit: the script named a CUDA device (factory device=, .cuda(), .to('cuda')); it
// wins over the host rule for allocations made outside any op (see dev_for).
enum class Dev : char { unset = 0, gpu = 'g', gpu_explicit = 'G', host = 'h' };

// What the allocating thread is running, from its RecordFunction stack.
struct OpContext {
    const char *outer = nullptr; // outermost op or Python range (e.g. Optimizer.step#Adam.step)
    const char *inner = nullptr; // innermost dispatched op; null when none is running
    bool bookkeeping = false;    // inside a profiler:: op (record_function handles)
    // The innermost op when it is a CPU matrix product (torch_hooks.cpp): what it allocates
    // itself and frees before it returns is the CPU library's scratch (see on_alloc).
    const void *gemm = nullptr;
};

// Interned stand-in for INNER when no dispatched op is running: the storage was made by
// Python argument parsing or tensor-from-data (a wrapped Python scalar, torch.tensor(...)).
constexpr const char *k_no_op_name = "(no-op)";

struct Totals {
    uint64_t allocs = 0;
    uint64_t frees = 0;
    uint64_t live_bytes = 0;
    uint64_t live_count = 0;
    uint64_t live_gpu_bytes = 0; // storages tagged 'g': what torch.cuda.memory_allocated reports
    uint64_t peak_gpu_bytes = 0;
};

class Recorder
{
  public:
    Result<void> open(const std::string &path);
    bool recording() const { return m_recording; }

    // Allocator callbacks. on_free of a pointer never seen (allocated before recording began,
    // or by another allocator instance) is ignored: it has no A record to match.
    void on_alloc(const void *ptr, uint64_t bytes, const OpContext &ops);
    void on_free(const void *ptr);
    // The op GEMM (OpContext::gemm) returned: what it allocated and still holds is its output.
    void on_gemm_end(const void *gemm);

    // Attribution state set from Python (or the LibTorch runner).
    uint32_t intern(std::string_view name);
    void set_module(uint32_t name_id);
    void set_iteration(uint64_t n);
    void set_phase(std::string_view phase);
    void empty_cache();
    void memory_fraction(double fraction);
    void meta(std::string_view key, std::string_view value);
    void kernel(std::string_view text);

    // 'g'/'h' of a live storage by its base pointer; 0 when the pointer is not a live storage.
    char dev_of(const void *ptr);

    Totals totals();
    void reset_gpu_peak();
    Result<void> finish();
    void abandon();
    // After fork() in the child: stop recording so a DataLoader worker never writes the trace.
    void disown_after_fork();
    std::mutex &mutex() { return m_mu; }

    static void set_thread_dev(Dev dev);
    static Dev thread_dev();

  private:
    struct Live {
        uint64_t id;
        uint64_t bytes;
        char dev;
    };
    using LiveMap = std::unordered_map<const void *, Live>;
    void emit_markers_locked();
    void free_locked(LiveMap::iterator it);
    void free_stale_locked(LiveMap::iterator it);
    uint32_t intern_locked(std::string_view name);
    uint32_t context_locked(const OpContext &ops);
    char dev_for(const OpContext &ops) const;
    void add_live_locked(const void *ptr, uint64_t bytes, char dev, uint32_t ctx);
    void flush_gemm_locked(const void *gemm);

    // Device storages a CPU matrix product allocated itself, held back until it returns.
    struct Held {
        const void *ptr;
        uint64_t bytes;
        uint32_t ctx;
        const void *gemm;
    };
    std::vector<Held> m_held;

    std::mutex m_mu;
    bool m_recording = false;
    TraceWriter m_writer;
    LiveMap m_live;
    uint64_t m_missed_frees = 0;
    Totals m_totals;
    uint64_t m_next_id = 1;

    // Names (module paths, op names) and the interned S strings built from them.
    std::deque<std::string> m_names; // deque: stable addresses for the string_view keys
    std::unordered_map<std::string_view, uint32_t> m_name_ids;
    std::unordered_map<uint64_t, uint32_t> m_ctx_ids; // key: module, outer, inner name ids
    uint32_t m_next_string = 1;
    uint32_t m_module = 0;
    // Iteration and phase marks, queued in the order they came and written just before the
    // next event. Every phase that began is written, events or not: 1.13's
    // zero_grad(set_to_none=False) allocates nothing, and the analysis needs its mark for the
    // set_to_none=True rewrite of 2.x (docs/capture.md, "Attribution"). Marks still queued at
    // finish() are dropped: a trace never ends with an empty iteration (the script stopped
    // after its last step).
    struct Mark {
        uint64_t iteration; // 0: a phase mark
        std::string phase;
    };
    std::vector<Mark> m_marks;
    std::string m_phase;
    bool m_phase_written = false; // m_phase is written (or queued) since the last iteration mark
};

// The process-wide recorder (never destroyed: tensors may be freed during interpreter exit).
Recorder &recorder();

} // namespace xmem::capture
