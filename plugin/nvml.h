/*
 * nvml.h — the thread that samples the job's GPU memory through NVML (nvml.c).
 *
 * Contract: xmem_sampler_start returns 0 or -1 (with a one-line message starting with
 * "xmem: " in err); xmem_sampler_stop is a bool: whether something was measured.
 */
#ifndef XMEM_NVML_H
#define XMEM_NVML_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct xmem_sampler_config {
    char library[256]; /* dlopen name or path of libnvidia-ml */
    int interval_ms;
    uint32_t job_id;
    pid_t ancestor; /* this slurmstepd */
};
struct xmem_sampler;
/* Starts the sampler thread; it opens NVML itself, so a slow nvmlInit delays no task. */
int xmem_sampler_start(const struct xmem_sampler_config *cfg, struct xmem_sampler **s, char *err,
                       size_t errlen);
/* Stops and joins it (at most timeout_ms) and frees it. True and the peak in bytes when
 * something was measured, else false with the reason in why. */
bool xmem_sampler_stop(struct xmem_sampler *s, int timeout_ms, uint64_t *peak, char *why,
                       size_t whylen);

#endif
