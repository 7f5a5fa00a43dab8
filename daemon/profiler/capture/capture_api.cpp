#include "capture_api.h"

#include <mutex>
#include <string>

#include "recorder.h"
#include "torch_hooks.h"

using xmem::capture::Dev;
using xmem::capture::Recorder;
using xmem::capture::recorder;

namespace
{
std::mutex g_error_mu;
std::string g_error;

int fail(const std::string &message)
{
    std::lock_guard<std::mutex> lock(g_error_mu);
    g_error = message;
    return -1;
}
} // namespace

extern "C" {

int xmem_capture_start(const char *path)
{
    if (path == nullptr || *path == '\0')
        return fail("xmem: no trace path given (set --out)");
    if (recorder().recording())
        return fail("xmem: capture already started");
    xmem::Result<void> opened = recorder().open(path);
    if (!opened.ok())
        return fail(opened.error().message);
    xmem::Result<void> hooked = xmem::capture::install_torch_hooks();
    if (!hooked.ok()) {
        recorder().abandon();
        return fail(hooked.error().message);
    }
    return 0;
}

const char *xmem_capture_error(void)
{
    std::lock_guard<std::mutex> lock(g_error_mu);
    return g_error.c_str();
}

void xmem_capture_kernel(const char *text)
{
    if (text)
        recorder().kernel(text);
}

void xmem_capture_meta(const char *key, const char *value)
{
    if (key && value)
        recorder().meta(key, value);
}

uint32_t xmem_capture_intern(const char *name)
{
    return name ? recorder().intern(name) : 0;
}
void xmem_capture_set_module(uint32_t name_id)
{
    recorder().set_module(name_id);
}
void xmem_capture_iteration(uint64_t n)
{
    recorder().set_iteration(n);
}
void xmem_capture_phase(const char *phase)
{
    if (phase)
        recorder().set_phase(phase);
}

int xmem_capture_set_dev(int dev)
{
    int previous = static_cast<int>(Recorder::thread_dev());
    Dev d = dev == 'g'   ? Dev::gpu
            : dev == 'G' ? Dev::gpu_explicit
            : dev == 'h' ? Dev::host
                         : Dev::unset;
    Recorder::set_thread_dev(d);
    return previous;
}

int xmem_capture_dev_of(uintptr_t ptr)
{
    return recorder().dev_of(reinterpret_cast<const void *>(ptr));
}
void xmem_capture_empty_cache(void)
{
    recorder().empty_cache();
}
void xmem_capture_memory_fraction(double fraction)
{
    recorder().memory_fraction(fraction);
}
uint64_t xmem_capture_allocs(void)
{
    return recorder().totals().allocs;
}
uint64_t xmem_capture_frees(void)
{
    return recorder().totals().frees;
}
uint64_t xmem_capture_live_bytes(void)
{
    return recorder().totals().live_bytes;
}
uint64_t xmem_capture_device_bytes(void)
{
    return recorder().totals().live_gpu_bytes;
}
uint64_t xmem_capture_device_peak_bytes(void)
{
    return recorder().totals().peak_gpu_bytes;
}
void xmem_capture_reset_device_peak(void)
{
    recorder().reset_gpu_peak();
}

int xmem_capture_finish(void)
{
    xmem::Result<void> finished = recorder().finish();
    return finished.ok() ? 0 : fail(finished.error().message);
}

void xmem_capture_abandon(void)
{
    recorder().abandon();
}

} // extern "C"
