#include "recorder.h"

#include <cstring>
#include <pthread.h>

namespace xmem::capture
{

namespace
{
thread_local Dev t_dev = Dev::unset;

constexpr uint64_t k_name_bits = 21; // 2M distinct names per field: far more than any model has
} // namespace

Recorder &recorder()
{
    static Recorder *r = new Recorder();
    return *r;
}

void Recorder::set_thread_dev(Dev dev)
{
    t_dev = dev;
}
Dev Recorder::thread_dev()
{
    return t_dev;
}

// fork() (DataLoader workers) must not happen while another thread holds the mutex, or the
// child would deadlock on its first allocation; and the child must never record.
static void before_fork()
{
    recorder().mutex().lock();
}
static void after_fork_parent()
{
    recorder().mutex().unlock();
}
static void after_fork_child()
{
    recorder().disown_after_fork();
    recorder().mutex().unlock();
}

Result<void> Recorder::open(const std::string &path)
{
    static bool fork_handlers =
        (pthread_atfork(before_fork, after_fork_parent, after_fork_child), true);
    (void)fork_handlers;
    std::lock_guard<std::mutex> lock(m_mu);
    Result<void> opened = m_writer.open(path);
    if (!opened.ok())
        return opened;
    m_recording = true;
    return Result<void>::success();
}

// The thread's device (set per torch call by the Python device mode), with two host rules
// for storages a GPU run keeps on the host whatever the call's device:
//  - profiler:: ops (record_function ranges) allocate host-side handles (288 bytes in 1.13);
//  - a storage made outside any dispatched op is a wrapped Python scalar or the host copy
//    of torch.tensor(data); unless the call named a CUDA device, it stays on the host.
char Recorder::dev_for(const OpContext &ops) const
{
    if (ops.bookkeeping)
        return 'h';
    Dev d = t_dev != Dev::unset ? t_dev : Dev::gpu; // a thread nobody marked: the training loop
    if (d == Dev::gpu_explicit)
        return 'g';
    if (ops.inner == nullptr)
        return 'h';
    return static_cast<char>(d);
}

uint32_t Recorder::intern_locked(std::string_view name)
{
    auto it = m_name_ids.find(name);
    if (it != m_name_ids.end())
        return it->second;
    m_names.emplace_back(name);
    uint32_t id = static_cast<uint32_t>(m_names.size()); // 0 means "none"
    m_name_ids.emplace(std::string_view(m_names.back()), id);
    return id;
}

uint32_t Recorder::intern(std::string_view name)
{
    std::lock_guard<std::mutex> lock(m_mu);
    return intern_locked(name);
}

// The ctx string is "MODULE|OUTER>INNER": the module path set by the forward hooks, the
// outermost op or Python range of the thread, and the innermost op that allocated.
uint32_t Recorder::context_locked(const OpContext &ops)
{
    uint32_t outer = ops.outer ? intern_locked(ops.outer) : 0;
    uint32_t inner = intern_locked(ops.inner ? ops.inner : k_no_op_name);
    if (inner == outer)
        inner = 0;
    uint64_t key =
        (uint64_t{m_module} << (2 * k_name_bits)) | (uint64_t{outer} << k_name_bits) | inner;
    auto it = m_ctx_ids.find(key);
    if (it != m_ctx_ids.end())
        return it->second;
    std::string text = m_module ? m_names[m_module - 1] : std::string();
    text += '|';
    if (outer)
        text += m_names[outer - 1];
    if (inner)
        text += '>' + m_names[inner - 1];
    uint32_t id = m_next_string++;
    m_ctx_ids.emplace(key, id);
    m_writer.string_def(id, text);
    return id;
}

void Recorder::emit_markers_locked()
{
    // An iteration states its phase even when it began in the one before.
    if (!m_phase_written && !m_phase.empty())
        m_marks.push_back({0, m_phase});
    m_phase_written = true;
    for (const Mark &m : m_marks) {
        if (m.iteration != 0)
            m_writer.iteration(m.iteration);
        else
            m_writer.phase(m.phase);
    }
    m_marks.clear();
}

// A CPU matrix product (oneDNN's bf16/fp16 kernels) takes packing and accumulation buffers
// from the CPU allocator and frees them before it returns; cuBLAS on a GPU runs in its
// persistent workspace and takes nothing from the caching allocator inside the op. So a
// device-tagged storage the product allocates itself is held back: freed inside the op, it
// is written as host memory; still live when the op returns, it is the op's output.
void Recorder::on_alloc(const void *ptr, uint64_t bytes, const OpContext &ops)
{
    if (!m_recording || ptr == nullptr || bytes == 0)
        return;
    std::lock_guard<std::mutex> lock(m_mu);
    if (!m_recording)
        return;
    emit_markers_locked();
    auto stale = m_live.find(ptr);
    if (stale != m_live.end())
        free_stale_locked(stale);
    char dev = dev_for(ops);
    if (dev == 'g' && ops.gemm != nullptr) {
        m_held.push_back({ptr, bytes, context_locked(ops), ops.gemm});
        return;
    }
    add_live_locked(ptr, bytes, dev, context_locked(ops));
}

void Recorder::add_live_locked(const void *ptr, uint64_t bytes, char dev, uint32_t ctx)
{
    uint64_t id = m_next_id++;
    m_live.emplace(ptr, Live{id, bytes, dev});
    m_totals.allocs++;
    m_totals.live_bytes += bytes;
    m_totals.live_count++;
    if (dev == 'g') {
        m_totals.live_gpu_bytes += bytes;
        if (m_totals.live_gpu_bytes > m_totals.peak_gpu_bytes)
            m_totals.peak_gpu_bytes = m_totals.live_gpu_bytes;
    }
    m_writer.alloc(id, bytes, dev, ctx);
}

void Recorder::on_free(const void *ptr)
{
    if (!m_recording || ptr == nullptr)
        return;
    std::lock_guard<std::mutex> lock(m_mu);
    if (!m_recording)
        return;
    for (auto h = m_held.begin(); h != m_held.end(); ++h) {
        if (h->ptr == ptr) {
            emit_markers_locked();
            add_live_locked(ptr, h->bytes, 'h', h->ctx);
            m_held.erase(h);
            free_locked(m_live.find(ptr));
            return;
        }
    }
    auto it = m_live.find(ptr);
    if (it == m_live.end())
        return;
    emit_markers_locked();
    free_locked(it);
}

void Recorder::on_gemm_end(const void *gemm)
{
    std::lock_guard<std::mutex> lock(m_mu);
    if (m_recording)
        flush_gemm_locked(gemm);
}

// GEMM null: every held storage (the trace ends).
void Recorder::flush_gemm_locked(const void *gemm)
{
    size_t kept = 0;
    for (const Held &h : m_held) {
        if (gemm == nullptr || h.gemm == gemm)
            add_live_locked(h.ptr, h.bytes, 'g', h.ctx);
        else
            m_held[kept++] = h;
    }
    m_held.resize(kept);
}

void Recorder::free_locked(LiveMap::iterator it)
{
    m_writer.free(it->second.id);
    m_totals.frees++;
    m_totals.live_bytes -= it->second.bytes;
    m_totals.live_count--;
    if (it->second.dev == 'g')
        m_totals.live_gpu_bytes -= it->second.bytes;
    m_live.erase(it);
}

// The allocator returned an address we still think is live: its free went around our
// deleter (a storage whose DataPtr was handed to another owner). The memory was free, so
// the old storage is closed here; the count goes into the metadata (missed_frees).
void Recorder::free_stale_locked(LiveMap::iterator it)
{
    m_missed_frees++;
    m_writer.meta("missed_frees", std::to_string(m_missed_frees));
    free_locked(it);
}

char Recorder::dev_of(const void *ptr)
{
    std::lock_guard<std::mutex> lock(m_mu);
    auto it = m_live.find(ptr);
    return it == m_live.end() ? 0 : it->second.dev;
}

void Recorder::set_module(uint32_t name_id)
{
    std::lock_guard<std::mutex> lock(m_mu);
    m_module = name_id <= m_names.size() ? name_id : 0;
}

void Recorder::set_iteration(uint64_t n)
{
    std::lock_guard<std::mutex> lock(m_mu);
    if (!m_recording)
        return;
    m_marks.push_back({n, {}});
    m_phase_written = false; // the phase is written again inside the new iteration
}

void Recorder::set_phase(std::string_view phase)
{
    std::lock_guard<std::mutex> lock(m_mu);
    if (!m_recording || phase == m_phase)
        return;
    m_phase = phase;
    m_marks.push_back({0, m_phase});
    m_phase_written = true;
}

void Recorder::empty_cache()
{
    std::lock_guard<std::mutex> lock(m_mu);
    if (!m_recording)
        return;
    emit_markers_locked();
    m_writer.empty_cache();
}

void Recorder::memory_fraction(double fraction)
{
    std::lock_guard<std::mutex> lock(m_mu);
    if (!m_recording)
        return;
    emit_markers_locked();
    m_writer.memory_fraction(fraction);
}

void Recorder::meta(std::string_view key, std::string_view value)
{
    std::lock_guard<std::mutex> lock(m_mu);
    m_writer.meta(key, value);
}

void Recorder::kernel(std::string_view text)
{
    std::lock_guard<std::mutex> lock(m_mu);
    if (!m_recording)
        return;
    m_writer.kernel(text);
}

Totals Recorder::totals()
{
    std::lock_guard<std::mutex> lock(m_mu);
    return m_totals;
}

void Recorder::reset_gpu_peak()
{
    std::lock_guard<std::mutex> lock(m_mu);
    m_totals.peak_gpu_bytes = m_totals.live_gpu_bytes;
}

Result<void> Recorder::finish()
{
    std::lock_guard<std::mutex> lock(m_mu);
    if (!m_recording) {
        return Result<void>::fail("xmem: capture is not recording (finished twice?)");
    }
    flush_gemm_locked(nullptr);
    m_recording = false;
    return m_writer.finish(m_totals.allocs, m_totals.frees, m_totals.live_bytes);
}

void Recorder::abandon()
{
    std::lock_guard<std::mutex> lock(m_mu);
    m_recording = false;
    m_writer.abandon();
}

void Recorder::disown_after_fork()
{
    // Runs in the child with m_mu held by the prepare handler (see torch_hooks.cpp).
    m_recording = false;
}

} // namespace xmem::capture
