/*
 * nvml.c — the job's peak GPU memory, sampled from NVML in a thread of slurmstepd.
 *
 * libnvidia-ml is opened with dlopen, so xmem.so neither needs the NVIDIA driver to build
 * nor fails to load on a node without one: there the thread finds no library and ends, and
 * the job end carries no measurement. Every interval the thread sums, over all devices,
 * the memory NVML reports for the job's processes (jobproc.c) and keeps the largest sum.
 *
 * The ABI relied on (no NVML header is needed; these have been stable since driver 319):
 *   nvmlReturn_t = int, 0 = NVML_SUCCESS, 7 = NVML_ERROR_INSUFFICIENT_SIZE;
 *   nvmlDevice_t = an opaque pointer;
 *   nvmlInit_v2(void), nvmlShutdown(void), nvmlDeviceGetCount_v2(unsigned int *),
 *   nvmlDeviceGetHandleByIndex_v2(unsigned int, nvmlDevice_t *);
 *   nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t, unsigned int *count, info *) — the
 *   unversioned symbol keeps the original (v1) layout {unsigned int pid; unsigned long long
 *   usedGpuMemory;} in every driver; the _v2/_v3 symbols take larger structs, and mixing the
 *   two up would misread every entry after the first. usedGpuMemory is in bytes, or
 *   ~0ULL (NVML_VALUE_NOT_AVAILABLE) when the driver cannot tell.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "defaults.h"
#include "jobproc.h"
#include "nvml.h"

#define NVML_SUCCESS 0
#define NVML_ERROR_INSUFFICIENT_SIZE 7
#define NVML_VALUE_NOT_AVAILABLE (~0ULL)

typedef struct nvml_device *nvml_device_t;

struct nvml_process_v1 {
    unsigned int pid;
    unsigned long long used_gpu_memory;
};

struct nvml_api {
    void *lib;
    int (*init)(void);
    int (*shutdown)(void);
    int (*count)(unsigned int *);
    int (*handle)(unsigned int, nvml_device_t *);
    int (*processes)(nvml_device_t, unsigned int *, struct nvml_process_v1 *);
};

struct xmem_sampler {
    struct xmem_sampler_config cfg;
    pthread_t thread;
    pthread_mutex_t mutex;
    pthread_cond_t wake; /* CLOCK_MONOTONIC */
    int stop;            /* set by xmem_sampler_stop */
    int samples;         /* successful samples */
    uint64_t peak;       /* largest sum seen, bytes */
    char why[256];       /* why nothing was measured, for a debug line */
};

static int nvml_open(struct nvml_api *api, const char *path, char *why, size_t len)
{
    static const char *const names[] = {"nvmlInit_v2", "nvmlShutdown", "nvmlDeviceGetCount_v2",
                                        "nvmlDeviceGetHandleByIndex_v2",
                                        "nvmlDeviceGetComputeRunningProcesses"};
    void **slots[] = {(void **)&api->init, (void **)&api->shutdown, (void **)&api->count,
                      (void **)&api->handle, (void **)&api->processes};

    memset(api, 0, sizeof(*api));
    api->lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (api->lib == NULL) {
        snprintf(why, len, "xmem: no NVML (%.200s); GPU memory is not measured", dlerror());
        return -1;
    }
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        *slots[i] = dlsym(api->lib, names[i]);
        if (*slots[i] == NULL) {
            snprintf(why, len, "xmem: %.160s lacks %s; GPU memory is not measured", path, names[i]);
            goto fail;
        }
    }
    if (api->init() != NVML_SUCCESS) {
        snprintf(why, len, "xmem: nvmlInit_v2 failed in %.180s; GPU memory is not measured", path);
        goto fail;
    }
    return 0;
fail:
    dlclose(api->lib);
    api->lib = NULL;
    return -1;
}

/* Processes on one device into *buf (grown as NVML asks); returns the count or -1. */
static int device_processes(const struct nvml_api *api, nvml_device_t dev,
                            struct nvml_process_v1 **buf, unsigned int *cap)
{
    for (int attempt = 0; attempt < 3; attempt++) {
        unsigned int n = *cap;
        int rc = api->processes(dev, &n, *buf);
        if (rc == NVML_SUCCESS)
            return (int)n;
        if (rc != NVML_ERROR_INSUFFICIENT_SIZE || n > XMEM_PLUGIN_NVML_MAX_PROCESSES)
            return -1;
        struct nvml_process_v1 *bigger = realloc(*buf, (n + 16) * sizeof(**buf));
        if (bigger == NULL)
            return -1;
        *buf = bigger;
        *cap = n + 16;
    }
    return -1;
}

/* Sum of the job's GPU memory over every device now; -1 when NVML cannot tell. */
static int sample(const struct xmem_sampler *s, const struct nvml_api *api,
                  struct nvml_process_v1 **buf, unsigned int *cap, uint64_t *sum)
{
    unsigned int ndev = 0;

    *sum = 0;
    if (api->count(&ndev) != NVML_SUCCESS)
        return -1;
    for (unsigned int d = 0; d < ndev; d++) {
        nvml_device_t dev;
        int n;
        if (api->handle(d, &dev) != NVML_SUCCESS)
            continue; /* a device the job's cgroup hides from slurmstepd */
        n = device_processes(api, dev, buf, cap);
        for (int i = 0; i < n; i++) {
            const struct nvml_process_v1 *p = &(*buf)[i];
            if (p->used_gpu_memory != NVML_VALUE_NOT_AVAILABLE &&
                xmem_pid_in_job((pid_t)p->pid, s->cfg.job_id, s->cfg.ancestor))
                *sum += p->used_gpu_memory;
        }
    }
    return 0;
}

/* Sleeps one interval, or less when stopped; returns 1 when stopped. */
static int wait_interval(struct xmem_sampler *s)
{
    struct timespec until;
    int stopped;

    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_sec += s->cfg.interval_ms / 1000;
    until.tv_nsec += (long)(s->cfg.interval_ms % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&s->mutex);
    while (!s->stop && pthread_cond_timedwait(&s->wake, &s->mutex, &until) != ETIMEDOUT)
        ;
    stopped = s->stop;
    pthread_mutex_unlock(&s->mutex);
    return stopped;
}

static void *sampler_main(void *arg)
{
    struct xmem_sampler *s = arg;
    struct nvml_api api;
    struct nvml_process_v1 *buf = NULL;
    unsigned int cap = 0;
    uint64_t sum;

    if (nvml_open(&api, s->cfg.library, s->why, sizeof(s->why)) < 0)
        return NULL;
    do {
        if (sample(s, &api, &buf, &cap, &sum) < 0)
            continue;
        pthread_mutex_lock(&s->mutex);
        s->samples++;
        if (sum > s->peak)
            s->peak = sum;
        pthread_mutex_unlock(&s->mutex);
    } while (!wait_interval(s));
    free(buf);
    api.shutdown();
    dlclose(api.lib);
    return NULL;
}

/* Keeps this plugin mapped until slurmstepd exits, so that a sampler thread left behind
 * by a join timeout never runs code that slurmstepd's dlclose has unmapped. */
static void pin_self(void)
{
    Dl_info info;

    if (dladdr((void *)sampler_main, &info) != 0 && info.dli_fname != NULL)
        dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
}

int xmem_sampler_start(const struct xmem_sampler_config *cfg, struct xmem_sampler **out, char *err,
                       size_t errlen)
{
    struct xmem_sampler *s = calloc(1, sizeof(*s));
    pthread_condattr_t attr;
    int rc;

    *out = NULL;
    if (s == NULL) {
        snprintf(err, errlen, "xmem: out of memory starting the GPU memory sampler");
        return -1;
    }
    s->cfg = *cfg;
    pthread_mutex_init(&s->mutex, NULL);
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&s->wake, &attr);
    pthread_condattr_destroy(&attr);
    pin_self();
    rc = pthread_create(&s->thread, NULL, sampler_main, s);
    if (rc != 0) {
        snprintf(err, errlen, "xmem: cannot start the GPU memory sampler: %s", strerror(rc));
        pthread_cond_destroy(&s->wake);
        pthread_mutex_destroy(&s->mutex);
        free(s);
        return -1;
    }
    *out = s;
    return 0;
}

static int join_within(pthread_t thread, int timeout_ms)
{
    struct timespec until;

    clock_gettime(CLOCK_REALTIME, &until); /* pthread_timedjoin_np measures CLOCK_REALTIME */
    until.tv_sec += timeout_ms / 1000;
    until.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    return pthread_timedjoin_np(thread, NULL, &until);
}

bool xmem_sampler_stop(struct xmem_sampler *s, int timeout_ms, uint64_t *peak, char *why,
                       size_t whylen)
{
    bool measured;

    *peak = 0;
    snprintf(why, whylen, "%s", "");
    if (s == NULL)
        return 0;
    pthread_mutex_lock(&s->mutex);
    s->stop = 1;
    pthread_cond_signal(&s->wake);
    pthread_mutex_unlock(&s->mutex);
    if (join_within(s->thread, timeout_ms) != 0) {
        /* NVML is stuck: leave the thread (and s, which it uses) to the end of slurmstepd. */
        pthread_detach(s->thread);
        snprintf(why, whylen,
                 "xmem: NVML did not answer within %d ms; GPU memory is not "
                 "measured",
                 timeout_ms);
        return 0;
    }
    /* Zero means no process of the job was seen, which is no measurement of it. */
    measured = s->samples > 0 && s->peak > 0;
    *peak = s->peak;
    if (s->why[0] != '\0')
        snprintf(why, whylen, "%s", s->why);
    else if (!measured)
        snprintf(why, whylen, "xmem: NVML saw no GPU memory of the job in %d samples", s->samples);
    pthread_cond_destroy(&s->wake);
    pthread_mutex_destroy(&s->mutex);
    free(s);
    return measured;
}
