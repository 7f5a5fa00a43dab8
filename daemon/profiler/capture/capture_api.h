/* C API of libxmem-capture, loaded by the Python shim through ctypes and linked by the
 * LibTorch runner. Every function is safe to call from any thread. Functions returning int
 * return 0 on success and -1 on failure; xmem_capture_error() then names what went wrong. */
#ifndef XMEM_CAPTURE_API_H
#define XMEM_CAPTURE_API_H

#include <stdint.h>

#if defined(__GNUC__)
#define XMEM_CAPTURE_API __attribute__((visibility("default")))
#else
#define XMEM_CAPTURE_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Installs the allocator wrapper and op callback and starts recording into PATH (written
 * atomically by xmem_capture_finish). */
XMEM_CAPTURE_API int xmem_capture_start(const char *path);
/* Last error message ("xmem: ..."), or "" when none. */
XMEM_CAPTURE_API const char *xmem_capture_error(void);

XMEM_CAPTURE_API void xmem_capture_meta(const char *key, const char *value);
/* Interns a module path or range name; the id is stable for the process. */
XMEM_CAPTURE_API uint32_t xmem_capture_intern(const char *name);
/* Writes "K TEXT": the geometry of a module's kernel (a convolution: module path, shapes,
 * stride, padding, dilation, groups), which the estimator sizes cuDNN workspaces from. */
XMEM_CAPTURE_API void xmem_capture_kernel(const char *text);
/* Module whose forward is running (0: none). */
XMEM_CAPTURE_API void xmem_capture_set_module(uint32_t name_id);
/* Starts iteration N (writes "I N"). */
XMEM_CAPTURE_API void xmem_capture_iteration(uint64_t n);
/* Phase of the following events: setup data forward backward optimizer zero_grad other. */
XMEM_CAPTURE_API void xmem_capture_phase(const char *phase);
/* Device tag of this thread's following allocations: 'g', 'G' (the script named a CUDA
 * device: 'g' even outside any op), 'h', or 0 for the process default ('g'). Returns the
 * previous tag. */
XMEM_CAPTURE_API int xmem_capture_set_dev(int dev);
/* 'g' or 'h' for a live storage's base pointer, 0 for a pointer that is no live storage. */
XMEM_CAPTURE_API int xmem_capture_dev_of(uintptr_t ptr);
XMEM_CAPTURE_API void xmem_capture_empty_cache(void);
XMEM_CAPTURE_API void xmem_capture_memory_fraction(double fraction);

/* Running totals (for checks and the launcher's summary). */
XMEM_CAPTURE_API uint64_t xmem_capture_allocs(void);
XMEM_CAPTURE_API uint64_t xmem_capture_frees(void);
XMEM_CAPTURE_API uint64_t xmem_capture_live_bytes(void);
/* Live and peak bytes of storages tagged 'g' (torch.cuda.memory_allocated and its peak). */
XMEM_CAPTURE_API uint64_t xmem_capture_device_bytes(void);
XMEM_CAPTURE_API uint64_t xmem_capture_device_peak_bytes(void);
XMEM_CAPTURE_API void xmem_capture_reset_device_peak(void);

/* Writes the Z line and the final trace file; recording stops. */
XMEM_CAPTURE_API int xmem_capture_finish(void);
/* Stops recording and deletes the partial trace. */
XMEM_CAPTURE_API void xmem_capture_abandon(void);

#ifdef __cplusplus
}
#endif

#endif
