/*
 * fake_nvml.c — libxmem-fake-nvml.so, a stand-in for libnvidia-ml.so.1 on machines without
 * an NVIDIA GPU (tests only; plugstack nvml=PATH points xmem.so at it, `xmem probe-gpu --nvml
 * PATH` too). It exports the five symbols the plugin resolves, with the ABI plugin/nvml.c
 * documents, and the five more the probe reads (below); it reports as GPU processes every
 * live process whose environment (/proc/PID/environ) carries
 *
 *   XMEM_FAKE_NVML_MIB=N      it uses N MiB, or
 *   XMEM_FAKE_NVML_FILE=PATH  it uses as many MiB as PATH holds now (a growing job),
 *   XMEM_FAKE_NVML_GPU=K      on device K (default 0; the fake has XMEM_FAKE_NVML_DEVICES
 *                             devices, default 2, read from the loading process).
 *
 * Tests that run side by side under ctest -j each stand for a machine of their own: a loading
 * process with XMEM_FAKE_NVML_MACHINE=TAG counts only processes carrying the same TAG, and one
 * without it only processes without it (the probe's test refused a "busy" GPU once because
 * the sampler's test, in parallel, had marked processes of its own).
 *
 * Reading another user's environ needs root, as slurmstepd is; a test process sees its own
 * children. XMEM_FAKE_NVML_FAIL_INIT=1 in the loading process makes nvmlInit_v2 fail.
 *
 * For `xmem probe-gpu` (daemon/probe/), with NVML's documented signatures (nvml.h, the NVML
 * API Reference): nvmlSystemGetDriverVersion ("999.99.99-fake"), nvmlDeviceGetName
 * ("NVIDIA Fake GPU 16GB"), nvmlDeviceGetCudaComputeCapability (8.0) and
 * nvmlDeviceGetMemoryInfo, whose nvmlMemory_t (bytes: total, free, used) says
 *   total  XMEM_FAKE_NVML_TOTAL_MIB (default 16384) MiB,
 *   used   the MiB held in the file XMEM_FAKE_NVML_USED_FILE names (read from the loading
 *          process) when it is set, the GPU's marked processes otherwise: the probe's test
 *          points its fake torch (tests/fakes/torch-cuda/) at the same file.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NVML_SUCCESS 0
#define NVML_ERROR_INVALID_ARGUMENT 2
#define NVML_ERROR_INSUFFICIENT_SIZE 7
#define NVML_ERROR_UNKNOWN 999

typedef struct fake_device *nvmlDevice_t;

typedef struct {
    unsigned int pid;
    unsigned long long usedGpuMemory;
} nvmlProcessInfo_v1_t;

typedef struct {
    unsigned long long total;
    unsigned long long free;
    unsigned long long used;
} nvmlMemory_t;

static unsigned int device_count(void)
{
    const char *v = getenv("XMEM_FAKE_NVML_DEVICES");
    return v ? (unsigned int)strtoul(v, NULL, 10) : 2;
}

int nvmlInit_v2(void)
{
    const char *fail = getenv("XMEM_FAKE_NVML_FAIL_INIT");
    return fail && strcmp(fail, "1") == 0 ? NVML_ERROR_UNKNOWN : NVML_SUCCESS;
}

int nvmlShutdown(void)
{
    return NVML_SUCCESS;
}

int nvmlDeviceGetCount_v2(unsigned int *count)
{
    *count = device_count();
    return NVML_SUCCESS;
}

int nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device)
{
    if (index >= device_count())
        return NVML_ERROR_INVALID_ARGUMENT;
    *device = (nvmlDevice_t)(uintptr_t)(index + 1);
    return NVML_SUCCESS;
}

static unsigned long long mib_from_file(const char *path)
{
    unsigned long long mib = 0;
    FILE *f = fopen(path, "re");
    if (f) {
        if (fscanf(f, "%llu", &mib) != 1)
            mib = 0;
        fclose(f);
    }
    return mib;
}

/* The loading process's machine tag, "" when it has none. */
static const char *machine_tag(void)
{
    const char *tag = getenv("XMEM_FAKE_NVML_MACHINE");
    return tag ? tag : "";
}

/* MiB the process with this environ uses on device gpu; 0 when it is not marked, or marked
 * on another fake machine. */
static unsigned long long marked_mib(const char *env, size_t len, unsigned int gpu)
{
    unsigned long long mib = 0;
    unsigned int on = 0;
    int marked = 0;
    const char *machine = "";

    for (const char *e = env; e < env + len; e += strlen(e) + 1) {
        if (strncmp(e, "XMEM_FAKE_NVML_MIB=", 19) == 0)
            mib = strtoull(e + 19, NULL, 10), marked = 1;
        else if (strncmp(e, "XMEM_FAKE_NVML_FILE=", 20) == 0)
            mib = mib_from_file(e + 20), marked = 1;
        else if (strncmp(e, "XMEM_FAKE_NVML_GPU=", 19) == 0)
            on = (unsigned int)strtoul(e + 19, NULL, 10);
        else if (strncmp(e, "XMEM_FAKE_NVML_MACHINE=", 23) == 0)
            machine = e + 23;
    }
    return marked && on == gpu && strcmp(machine, machine_tag()) == 0 ? mib : 0;
}

static size_t read_environ(const char *pid, char *buf, size_t cap)
{
    char path[300];
    size_t n;
    FILE *f;

    snprintf(path, sizeof(path), "/proc/%s/environ", pid);
    f = fopen(path, "re");
    if (!f)
        return 0;
    n = fread(buf, 1, cap - 1, f);
    buf[n] = '\0';
    fclose(f);
    return n;
}

int nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t device, unsigned int *count,
                                         nvmlProcessInfo_v1_t *infos)
{
    unsigned int gpu = (unsigned int)((uintptr_t)device - 1), found = 0;
    static char env[1 << 16];
    struct dirent *d;
    DIR *proc = opendir("/proc");

    if (!proc)
        return NVML_ERROR_UNKNOWN;
    while ((d = readdir(proc)) != NULL) {
        unsigned long long mib;
        size_t n;
        if (d->d_name[0] < '0' || d->d_name[0] > '9')
            continue;
        n = read_environ(d->d_name, env, sizeof(env));
        mib = n ? marked_mib(env, n, gpu) : 0;
        if (mib == 0)
            continue;
        if (found < *count && infos) {
            infos[found].pid = (unsigned int)strtoul(d->d_name, NULL, 10);
            infos[found].usedGpuMemory = mib << 20;
        }
        found++;
    }
    closedir(proc);
    if (found > *count) {
        *count = found;
        return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    *count = found;
    return NVML_SUCCESS;
}

/* Copies text into buf of length len, as NVML's string getters do. */
static int copy_out(const char *text, char *buf, unsigned int len)
{
    if (!buf || strlen(text) + 1 > len)
        return NVML_ERROR_INSUFFICIENT_SIZE;
    memcpy(buf, text, strlen(text) + 1);
    return NVML_SUCCESS;
}

int nvmlSystemGetDriverVersion(char *version, unsigned int length)
{
    return copy_out("999.99.99-fake", version, length);
}

int nvmlDeviceGetName(nvmlDevice_t device, char *name, unsigned int length)
{
    (void)device;
    return copy_out("NVIDIA Fake GPU 16GB", name, length);
}

int nvmlDeviceGetCudaComputeCapability(nvmlDevice_t device, int *major, int *minor)
{
    (void)device;
    *major = 8;
    *minor = 0;
    return NVML_SUCCESS;
}

/* The sum of what the device's marked processes use, in MiB. */
static unsigned long long processes_mib(nvmlDevice_t device)
{
    nvmlProcessInfo_v1_t infos[64];
    unsigned int count = 64;
    unsigned long long mib = 0;

    if (nvmlDeviceGetComputeRunningProcesses(device, &count, infos) != NVML_SUCCESS)
        return 0;
    for (unsigned int i = 0; i < count; i++)
        mib += infos[i].usedGpuMemory >> 20;
    return mib;
}

int nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t *memory)
{
    const char *total = getenv("XMEM_FAKE_NVML_TOTAL_MIB");
    const char *used_file = getenv("XMEM_FAKE_NVML_USED_FILE");
    unsigned long long total_mib = total ? strtoull(total, NULL, 10) : 16384;
    unsigned long long used_mib = used_file ? mib_from_file(used_file) : processes_mib(device);

    if (!memory)
        return NVML_ERROR_INVALID_ARGUMENT;
    memory->total = total_mib << 20;
    memory->used = used_mib << 20;
    memory->free = used_mib < total_mib ? (total_mib - used_mib) << 20 : 0;
    return NVML_SUCCESS;
}
