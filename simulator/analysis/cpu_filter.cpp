#include "analysis/cpu_filter.h"

#include "analysis/ops.h"

#include <unordered_map>
#include <vector>

namespace xmem::analysis
{

namespace
{

enum class Drop : uint8_t { keep, host, scalar, cpu_temp };

bool is_scalar_bookkeeping(const Workload &work, const TraceEvent &ev)
{
    if (ev.bytes > k_host_scalar_max_bytes)
        return false;
    if (ev.phase == Phase::optimizer || ev.phase == Phase::zero_grad)
        return true;
    return is_host_scalar_ctx(work.ctx_text(ev.ctx));
}

// oneDNN's convolution backward (the exact capture's CPU kernel) makes buffers cuDNN does
// not: a weight-sized copy of the weight, a copy of grad_output and a weight-sized buffer
// it reorders grad_weight through, all with at::empty, so their op names are those of real
// outputs (issue 17 class 9: ConvNeXt came out above fast mode). They are freed while the
// kernel runs; the outputs outlive it, so their frees come after the engine releases the
// node's input gradient, a storage made before the kernel began. A kernel begins with its
// op run, or with the first allocation after such a release or after the gradient
// accumulation (`InputBuffer` add) that ends the node before. The CPU's batch norm backward
// does the same with an input-sized buffer (issue 33: up to 51 MB a layer on ResNet-50, 2.6 %
// of the A100's reserved peak under fast mode's); CUDA's batch_norm_backward_cuda and cuDNN's
// backward allocate grad_input, grad_weight and grad_bias only (docs/cuda-semantics.md).
class ConvBackwardScratch
{
  public:
    explicit ConvBackwardScratch(const Workload &work) : m_work(work) {}

    void on_alloc(size_t i, bool new_run)
    {
        std::string_view ctx = m_work.ctx_text(m_work.events[i].ctx);
        // After the last node's inputs were released, or its output accumulated, any
        // allocation belongs to the next node.
        if (new_run || m_inputs_freed || m_after_accumulation || !makes_scratch(ctx))
            begin(i);
        m_after_accumulation = is_grad_accumulation(ctx);
    }
    // True when the storage allocated at A, freed now, is the kernel's scratch.
    bool on_free(size_t a)
    {
        if (a < m_start) {
            m_inputs_freed = true;
            return false;
        }
        std::string_view ctx = m_work.ctx_text(m_work.events[a].ctx);
        return !m_inputs_freed && makes_scratch(ctx) &&
               innermost_op(ctx).substr(0, 11) == "aten::empty";
    }

  private:
    static bool makes_scratch(std::string_view ctx)
    {
        return is_conv_backward_op(ctx) || is_batch_norm_backward_op(ctx);
    }
    void begin(size_t i)
    {
        m_start = i;
        m_inputs_freed = false;
    }
    const Workload &m_work;
    size_t m_start = 0;
    bool m_inputs_freed = false;
    bool m_after_accumulation = false;
};

// Decides, for every alloc event index, whether the storage stays (or is dropped and why).
std::vector<Drop> decide(const Workload &work)
{
    const auto &events = work.events;
    std::vector<Drop> drop(events.size(), Drop::keep);
    std::unordered_map<uint64_t, size_t> live;    // id -> alloc index
    std::vector<size_t> run_of(events.size(), 0); // alloc index -> op run it started in
    OpRunKeys keys(work);
    ConvBackwardScratch scratch(work);
    bool exact = work.meta_value("capture") != "fast"; // a CPU kernel's: not in fast traces
    size_t run = 0;
    uint64_t run_key = 0;
    bool run_open = false;
    for (size_t i = 0; i < events.size(); ++i) {
        const TraceEvent &ev = events[i];
        switch (ev.kind) {
        case EventKind::alloc: {
            bool new_run = false;
            if (uint64_t k = keys.key(ev.ctx); !run_open || k != run_key) {
                ++run;
                run_key = k;
                run_open = true;
                new_run = true;
            }
            scratch.on_alloc(i, new_run);
            run_of[i] = run;
            live[ev.id] = i;
            if (ev.dev == Device::host)
                drop[i] = Drop::host;
            else if (is_scalar_bookkeeping(work, ev))
                drop[i] = Drop::scalar;
            break;
        }
        case EventKind::free: {
            auto it = live.find(ev.id);
            if (it == live.end())
                break;
            size_t a = it->second;
            live.erase(it);
            std::string_view ctx = work.ctx_text(events[a].ctx);
            bool cpu_kernel_temp = exact && (scratch.on_free(a) || is_cpu_dtype_promotion(ctx));
            if (drop[a] == Drop::keep && run_open && run_of[a] == run &&
                (cpu_kernel_temp || is_cpu_only_temporary_op(ctx)))
                drop[a] = Drop::cpu_temp;
            break;
        }
        case EventKind::phase:
        case EventKind::iteration:
            run_open = false; // a phase or iteration boundary ends any op run
            break;
        default:
            break;
        }
    }
    return drop;
}

} // namespace

FilterStats drop_cpu_only(Workload &work)
{
    std::vector<Drop> drop = decide(work);
    FilterStats stats;
    std::unordered_map<uint64_t, bool> dropped_live; // id -> dropped, while live
    std::vector<TraceEvent> out;
    out.reserve(work.events.size());
    for (size_t i = 0; i < work.events.size(); ++i) {
        const TraceEvent &ev = work.events[i];
        if (ev.kind == EventKind::alloc) {
            bool gone = drop[i] != Drop::keep;
            dropped_live[ev.id] = gone;
            if (drop[i] == Drop::host)
                stats.host.add(ev.bytes);
            else if (drop[i] == Drop::scalar)
                stats.scalar.add(ev.bytes);
            else if (drop[i] == Drop::cpu_temp)
                stats.cpu_temp.add(ev.bytes);
            if (gone)
                continue;
        } else if (ev.kind == EventKind::free || ev.kind == EventKind::record_stream) {
            auto it = dropped_live.find(ev.id);
            bool gone = it != dropped_live.end() && it->second;
            if (ev.kind == EventKind::free && it != dropped_live.end())
                dropped_live.erase(it);
            if (gone)
                continue;
        }
        out.push_back(ev);
    }
    work.events = std::move(out);
    return stats;
}

} // namespace xmem::analysis
