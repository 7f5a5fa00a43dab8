#include "analysis/workspaces.h"

#include "analysis/conv_workspace.h"
#include "analysis/ops.h"

#include <algorithm>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace xmem::analysis
{

WorkspacePolicy workspace_policy(sim::TorchVersion target, const GpuSpec &gpu)
{
    WorkspacePolicy p;
    if (target.major >= 2)
        p.cublas_bytes = gpu.cublas_workspace_bytes;
    else
        p.cublas_outside_bytes = k_cublas_handles * gpu.cublas_workspace_bytes;
    if (target.major >= 2) {
        p.lt_bytes = gpu.cublaslt_workspace_bytes;
        if (target.at_least(2, 10))
            p.lt = LtWorkspace::none;
        else if (target.at_least(2, 8))
            p.lt = LtWorkspace::persistent;
        else
            p.lt = LtWorkspace::transient;
    }
    p.cudnn_context_bytes = gpu.cudnn_context_bytes;
    p.conv_factor = k_conv_workspace_factor;
    p.conv_bound_factor = k_conv_workspace_bound_factor;
    p.conv_bound_step = k_conv_workspace_bound_step;
    p.conv_cap_bytes = k_conv_workspace_cap_bytes;
    return p;
}

uint64_t add_input_copies(Workload &work)
{
    // Per iteration: host allocs of the data phase, and whether any device alloc happened.
    std::unordered_map<uint32_t, bool> device_in_data;
    std::unordered_map<uint64_t, size_t> live_host; // id -> alloc index (data phase)
    std::unordered_set<size_t> alive_at_forward;
    for (size_t i = 0; i < work.events.size(); ++i) {
        const TraceEvent &ev = work.events[i];
        if (ev.kind == EventKind::alloc && ev.phase == Phase::data) {
            if (ev.dev == Device::gpu)
                device_in_data[ev.iteration] = true;
            else
                live_host[ev.id] = i;
        } else if (ev.kind == EventKind::free) {
            live_host.erase(ev.id);
        } else if (ev.kind == EventKind::phase && ev.phase == Phase::forward) {
            for (auto &[id, idx] : live_host)
                alive_at_forward.insert(idx);
            live_host.clear();
        }
    }
    uint64_t promoted = 0;
    for (size_t idx : alive_at_forward) {
        TraceEvent &ev = work.events[idx];
        if (device_in_data.count(ev.iteration))
            continue;
        ev.dev = Device::gpu;
        ++promoted;
    }
    // Frees and record_streams carry the storage's device: follow the promotion.
    if (promoted) {
        std::unordered_map<uint64_t, Device> dev;
        for (TraceEvent &ev : work.events) {
            if (ev.kind == EventKind::alloc)
                dev[ev.id] = ev.dev;
            else if (ev.kind == EventKind::free || ev.kind == EventKind::record_stream)
                if (auto it = dev.find(ev.id); it != dev.end())
                    ev.dev = it->second;
        }
    }
    return promoted;
}

namespace
{

class Inserter
{
  public:
    Inserter(Workload &work, const WorkspacePolicy &policy) : m_work(work), m_policy(policy)
    {
        m_ctx_cublas = work.intern("xmem|cublas_workspace");
        m_ctx_lt = work.intern("xmem|cublaslt_workspace");
        m_ctx_cudnn = work.intern("xmem|cudnn_workspace");
        for (const std::string &k : work.kernels)
            if (auto g = parse_conv_record(k))
                m_geometry[g->module] = std::move(*g); // the latest shape of each module
    }

    void new_iteration() { m_forwards.clear(); }

    // Called after each device allocation has been copied to `out`; `first` tells whether it
    // is the first of its op run (an op's output; later ones are its other results).
    void after_alloc(const TraceEvent &ev, bool first, std::vector<TraceEvent> &out)
    {
        std::string_view ctx = m_work.ctx_text(ev.ctx);
        if (is_conv_backward_op(ctx)) {
            stats.uses_cudnn = true;
            // A sum of gradients has grad_input's size and would be taken for another pass.
            if (!is_grad_accumulation(ctx))
                after_conv_backward_output(ev, first, out);
            return;
        }
        if (is_gemm_output(ctx))
            note_gemm_output(ev, ctx);
        if (!first)
            return;
        if (is_cublaslt_op(ctx)) {
            flush(out); // the cuBLAS workspace of this GEMM's handle came first
            add_lt(ev, out);
        }
        if (is_conv_forward_op(ctx)) {
            stats.uses_cudnn = true;
            after_conv_forward_output(ev, ctx, out);
        }
    }

    // Called before each event is copied to `out`: a pending cuBLAS workspace goes in
    // before the first event that is not an allocation inside the GEMM op (see below).
    void before_event(const TraceEvent &ev, std::vector<TraceEvent> &out)
    {
        if (m_bias_held && !(ev.kind == EventKind::alloc && ev.dev == Device::gpu &&
                             is_conv_backward_op(m_work.ctx_text(ev.ctx))))
            release_bias(out);
        if (!m_cublas_pending)
            return;
        if (ev.kind == EventKind::alloc && ev.dev == Device::gpu) {
            std::string_view ctx = m_work.ctx_text(ev.ctx);
            if (ctx.size() > m_gemm_ctx.size() && ctx.substr(0, m_gemm_ctx.size()) == m_gemm_ctx &&
                ctx[m_gemm_ctx.size()] == '>')
                return;
        }
        flush(out);
    }

    // Inserts a pending cuBLAS workspace now (before the next event, a cuBLASLt workspace of
    // the same GEMM, or at the end of the trace).
    void flush(std::vector<TraceEvent> &out)
    {
        release_bias(out);
        if (!m_cublas_pending)
            return;
        m_cublas_pending = false;
        out.push_back(
            make_alloc(m_work.fresh_id(), m_policy.cublas_bytes, m_ctx_cublas, m_gemm_output));
        ++stats.cublas;
    }

    WorkspaceStats stats;

  private:
    // cuBLAS (allocator.md 12.4): the workspace of a (handle, stream) is allocated when the
    // first GEMM on it asks for its handle (getCurrentCUDABlasHandle, CublasHandlePool.cpp),
    // inside at::cuda::blas::gemm/bgemm, i.e. after the op has allocated its output (a
    // structured kernel's set_output) and the contiguous copies of operands cuBLAS cannot
    // read as they are (prepare_matrix_for_cublas / prepare_batch_matrix_for_cublas in
    // native/cuda/Blas.cpp), and before those copies are freed at the op's end. So it
    // follows the GEMM's output and the allocations nested in that same op call after it.
    void note_gemm_output(const TraceEvent &ev, std::string_view ctx)
    {
        // Which handle: the backward runs on the autograd device thread.
        bool backward = ev.phase == Phase::backward;
        bool &done = backward ? m_cublas_backward : m_cublas_forward;
        if (done || m_policy.cublas_bytes == 0)
            return;
        done = true;
        m_cublas_pending = true;
        m_gemm_output = ev;
        m_gemm_ctx = std::string(ctx);
    }

    void add_lt(const TraceEvent &ev, std::vector<TraceEvent> &out)
    {
        if (m_policy.lt == LtWorkspace::none || m_policy.lt_bytes == 0)
            return;
        if (m_policy.lt == LtWorkspace::persistent) {
            if (m_lt_done)
                return;
            m_lt_done = true;
            out.push_back(make_alloc(m_work.fresh_id(), m_policy.lt_bytes, m_ctx_lt, ev));
        } else {
            uint64_t id = m_work.fresh_id();
            out.push_back(make_alloc(id, m_policy.lt_bytes, m_ctx_lt, ev));
            out.push_back(make_free(id, m_policy.lt_bytes, ev));
        }
        ++stats.cublaslt;
    }

    // A forward convolution of a module with a K record: its workspace follows its output.
    void after_conv_forward_output(const TraceEvent &ev, std::string_view ctx,
                                   std::vector<TraceEvent> &out)
    {
        auto it = m_geometry.find(std::string(ctx.substr(0, ctx.find('|'))));
        if (it == m_geometry.end())
            return;
        const ConvGeometry &g = it->second;
        uint64_t numel = g.output_numel();
        uint64_t elem = numel && ev.bytes % numel == 0 ? ev.bytes / numel : g.elem;
        m_forwards.push_back(Forward{&g, elem, false, false});
        add_transient(
            ev, conv_workspace_bytes(g, elem, m_policy.conv_factor, m_policy.conv_cap_bytes), out);
    }

    // grad_input (backward data) and grad_weight (backward filter) each get the workspace of
    // their pass. The pass is told by size: grad_input has the input's, grad_weight the
    // weight's element count. Consecutive backward runs share a context, so an output the
    // current match cannot take starts the next match. An output no forward can take
    // (grad_bias) keeps the current match. CUDA's convolution_backward sums grad_output into
    // grad_bias after the cuDNN passes; the CPU's oneDNN backward makes it before grad_weight,
    // so a grad_bias that comes while the filter pass is awaited waits for it.
    void after_conv_backward_output(const TraceEvent &ev, bool first, std::vector<TraceEvent> &out)
    {
        if (!first && m_backward && !takes(*m_backward, ev.bytes) && !m_backward->filter_done &&
            ev.bytes == m_backward->g->output_channels() * m_backward->elem &&
            out.back().id == ev.id) {
            m_bias_held = out.back();
            out.pop_back();
            return;
        }
        if (first || !m_backward || !takes(*m_backward, ev.bytes)) {
            Forward *next = match_forward(ev.bytes);
            if (!next)
                return;
            m_backward = next;
        }
        Forward &f = *m_backward;
        bool data = !f.data_done && ev.bytes == f.g->input_numel() * f.elem;
        (data ? f.data_done : f.filter_done) = true;
        add_transient(
            ev, conv_workspace_bytes(*f.g, f.elem, m_policy.conv_factor, m_policy.conv_cap_bytes),
            out);
        if (!data)
            release_bias(out);
    }

    void release_bias(std::vector<TraceEvent> &out)
    {
        if (m_bias_held)
            out.push_back(*m_bias_held);
        m_bias_held.reset();
    }

    struct Forward {
        const ConvGeometry *g;
        uint64_t elem;
        bool data_done, filter_done;
    };

    // Whether `bytes` is a pass output `f` still waits for.
    static bool takes(const Forward &f, uint64_t bytes)
    {
        return (!f.data_done && bytes == f.g->input_numel() * f.elem) ||
               (!f.filter_done && bytes == f.g->weight_numel() * f.elem);
    }

    // The latest forward of this iteration not yet matched whose input or weight is `bytes`
    // (autograd runs the backward in reverse order of the forward). Forwards after it had no
    // backward (no grad, or checkpointing) and are dropped; with no match (grad_bias, say)
    // nothing changes.
    Forward *match_forward(uint64_t bytes)
    {
        for (size_t i = m_forwards.size(); i-- > 0;) {
            if (takes(m_forwards[i], bytes)) {
                m_matched = m_forwards[i];
                m_forwards.resize(i);
                return &m_matched;
            }
        }
        return nullptr;
    }

    void add_transient(const TraceEvent &ev, uint64_t bytes, std::vector<TraceEvent> &out)
    {
        if (bytes == 0)
            return;
        uint64_t id = m_work.fresh_id();
        out.push_back(make_alloc(id, bytes, m_ctx_cudnn, ev));
        out.push_back(make_free(id, bytes, ev));
        ++stats.cudnn;
        stats.cudnn_max_bytes = std::max(stats.cudnn_max_bytes, bytes);
    }

    Workload &m_work;
    const WorkspacePolicy &m_policy;
    uint64_t m_ctx_cublas, m_ctx_lt, m_ctx_cudnn;
    bool m_cublas_forward = false, m_cublas_backward = false, m_lt_done = false;
    bool m_cublas_pending = false; // a workspace waits for the end of its GEMM's allocations
    TraceEvent m_gemm_output;      // the GEMM output it follows
    std::string m_gemm_ctx;
    std::unordered_map<std::string, ConvGeometry> m_geometry; // by module path
    std::vector<Forward> m_forwards;                          // this iteration's, in order
    Forward m_matched{};
    Forward *m_backward = nullptr;         // the backward op run's
    std::optional<TraceEvent> m_bias_held; // a grad_bias awaiting its filter pass
};

} // namespace

WorkspaceStats add_workspaces(Workload &work, const WorkspacePolicy &policy)
{
    Inserter ins(work, policy);
    std::vector<TraceEvent> out;
    out.reserve(work.events.size() + work.events.size() / 8);
    OpRunKeys keys(work);
    uint64_t run_key = 0;
    bool run_open = false;
    for (const TraceEvent &ev : work.events) {
        ins.before_event(ev, out);
        out.push_back(ev);
        if (ev.kind == EventKind::phase || ev.kind == EventKind::iteration) {
            run_open = false;
            if (ev.kind == EventKind::iteration)
                ins.new_iteration();
            continue;
        }
        if (ev.kind != EventKind::alloc || ev.dev != Device::gpu)
            continue;
        uint64_t k = keys.key(ev.ctx);
        bool first_of_run = !run_open || k != run_key;
        run_open = true;
        run_key = k;
        ins.after_alloc(ev, first_of_run, out);
    }
    ins.flush(out);
    ins.stats.outside_bytes =
        policy.cublas_outside_bytes + (ins.stats.uses_cudnn ? policy.cudnn_context_bytes : 0);
    work.events = std::move(out);
    return ins.stats;
}

} // namespace xmem::analysis
