// Mechanism "B" of docs/capture.md ("Why the CPU allocator is wrapped"): wrap the CPU
// allocator with c10::SetCPUAllocator. It sees every storage of every thread with its exact
// requested size, which is the number at::empty_cuda would hand to the CUDA caching allocator.
#include "torch_hooks.h"

#include <ATen/record_function.h>
#include <c10/core/CPUAllocator.h>

#include <cstring>
#include <vector>

#if __has_include(<torch/version.h>)
#include <torch/version.h>
#elif __has_include(<torch/csrc/api/include/torch/version.h>)
#include <torch/csrc/api/include/torch/version.h>
#endif

// torch 2.3 made Allocator::allocate non-const and added the pure virtual copy_data.
#if defined(TORCH_VERSION_MAJOR) &&                                                                \
    (TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 3))
#define XMEM_TORCH_2_3 1
#define XMEM_ALLOCATE_CONST
#else
#define XMEM_TORCH_2_3 0
#define XMEM_ALLOCATE_CONST const
#endif

#include "recorder.h"

namespace xmem::capture
{

namespace
{

// Stack of what runs on this thread: live RecordFunction objects (their names stay valid
// until their end callback pops them), and whether each is a dispatched op or a range.
struct Running {
    const at::RecordFunction *fn;
    bool is_op;
    bool is_gemm;
};
thread_local std::vector<Running> t_running;

OpContext current_ops()
{
    OpContext ops;
    if (t_running.empty())
        return ops;
    ops.outer = t_running.front().fn->name();
    if (t_running.back().is_gemm)
        ops.gemm = t_running.back().fn;
    for (size_t i = t_running.size(); i-- > 0;) {
        const char *name = t_running[i].fn->name();
        if (std::strncmp(name, "profiler::", 10) == 0)
            ops.bookkeeping = true;
        if (ops.inner == nullptr && t_running[i].is_op)
            ops.inner = name;
    }
    return ops;
}

// The matrix products whose CPU kernels (oneDNN, for bf16 and fp16) take scratch from the
// CPU allocator themselves, which a GPU's cuBLAS never takes from the caching allocator
// (Recorder::on_alloc).
bool is_gemm(const char *name)
{
    static const char *const k_gemms[] = {"aten::mm",      "aten::addmm",  "aten::bmm",
                                          "aten::baddbmm", "aten::addbmm", "aten::mv",
                                          "aten::addmv",   "aten::dot",    "aten::vdot"};
    if (std::strncmp(name, "aten::", 6) != 0)
        return false;
    for (const char *gemm : k_gemms) {
        if (std::strcmp(name, gemm) == 0)
            return true;
    }
    return false;
}

std::unique_ptr<at::ObserverContext> on_op_start(const at::RecordFunction &fn)
{
    bool is_op = fn.scope() != at::RecordScope::USER_SCOPE;
    t_running.push_back({&fn, is_op, is_op && is_gemm(fn.name())});
    return nullptr;
}

// Pops up to and including FN: an op whose end never reached us (an exception unwinding
// through a callback-less path) must not leave a stale pointer below it.
void on_op_end(const at::RecordFunction &fn, at::ObserverContext *)
{
    for (size_t i = t_running.size(); i-- > 0;) {
        if (t_running[i].fn == &fn) {
            if (t_running[i].is_gemm)
                recorder().on_gemm_end(&fn);
            t_running.resize(i);
            return;
        }
    }
}

void recording_deleter(void *ptr)
{
    recorder().on_free(ptr);
    c10::GetDefaultCPUAllocator()->raw_deleter()(ptr);
}

class RecordingAllocator final : public at::Allocator
{
  public:
    explicit RecordingAllocator(at::Allocator *base) : m_base(base) {}

    at::DataPtr allocate(size_t nbytes) XMEM_ALLOCATE_CONST override
    {
        at::DataPtr base = m_base->allocate(nbytes);
        void *ptr = base.get();
        // The default CPU allocator's context is the data pointer itself with a plain deleter,
        // so the pointer can be re-wrapped with our deleter (docs/capture.md, mechanism B).
        base.release_context();
        recorder().on_alloc(ptr, nbytes, current_ops());
        return {ptr, ptr, &recording_deleter, base.device()};
    }

    at::DeleterFnPtr raw_deleter() const override { return &recording_deleter; }

#if XMEM_TORCH_2_3
    void copy_data(void *dest, const void *src, std::size_t count) const override
    {
        default_copy_data(dest, src, count);
    }
#endif

  private:
    at::Allocator *m_base;
};

} // namespace

Result<void> install_torch_hooks()
{
    static bool installed = false;
    if (installed)
        return Result<void>::success();
    at::Allocator *base = c10::GetDefaultCPUAllocator();
    if (c10::GetCPUAllocator() != base) {
        return Result<void>::fail(
            "xmem: another CPU allocator is installed (mimalloc/profiler?); run without it");
    }
    // Never destroyed: tensors carry its deleter until the process ends.
    static auto *wrapper = new RecordingAllocator(base);
    c10::SetCPUAllocator(wrapper, /*priority=*/1);
    at::addGlobalCallback(at::RecordFunctionCallback(&on_op_start, &on_op_end).needsInputs(false));
    installed = true;
    return Result<void>::success();
}

} // namespace xmem::capture
