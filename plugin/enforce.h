/*
 * enforce.h — holding a packed job to its limit on its node: cgroup v2 dmem, MPS pinned
 * memory, and which level (enforce.c, docs/enforcement.md).
 *
 * Contract: the functions that read, format or apply return 0 or -1 (the appliers with a
 * one-line message starting with "xmem: " in err); xmem_mps_server_pids returns a count,
 * xmem_enforce_best a level; the bool predicates say so.
 */
#ifndef XMEM_ENFORCE_H
#define XMEM_ENFORCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The levels are daemon/contract/enforcement.h's, the one definition. */
#include "../daemon/contract/enforcement.h"

/* The job's cgroup v2 directory: root followed by the "0::" path of a /proc/PID/cgroup text,
 * cut after its job_<job_id> component. -1 when the task is in no such cgroup. */
int xmem_cgroup_job_dir(const char *proc_cgroup, uint32_t job_id, const char *root, char *dir,
                        size_t len);
/* plugstack job_cgroup=PATTERN with every %j replaced by the job id. */
int xmem_cgroup_pattern_dir(const char *pattern, uint32_t job_id, char *dir, size_t len);

#define XMEM_DMEM_MAX_REGIONS 16
#define XMEM_DMEM_REGION_LEN 128
/* The device memory regions of cgroup v2's dmem controller ("drm/0000:03:00.0/vram0"). */
struct xmem_dmem_regions {
    int n;
    char name[XMEM_DMEM_MAX_REGIONS][XMEM_DMEM_REGION_LEN];
};
/* Reads a dmem.capacity text ("REGION BYTES" lines); -1 when malformed or empty. */
int xmem_dmem_capacity_parse(const char *text, struct xmem_dmem_regions *r);
/* "REGION BYTES\n" for every region: what one write() to dmem.max carries. */
int xmem_dmem_max_text(const struct xmem_dmem_regions *r, uint64_t bytes, char *buf, size_t len);
/* True when a dmem.max text shows `bytes` for every region. */
bool xmem_dmem_max_shows(const char *text, const struct xmem_dmem_regions *r, uint64_t bytes);
/* True when root's dmem.capacity lists a region (into r) and job_dir has a dmem.max. */
bool xmem_dmem_available(const char *root, const char *job_dir, struct xmem_dmem_regions *r);
/* Writes the limit for every region to job_dir/dmem.max and checks that it reads back. */
int xmem_dmem_apply(const char *job_dir, const struct xmem_dmem_regions *r, uint64_t bytes,
                    char *err, size_t errlen);

/* True when program is an executable absolute path or found on PATH. */
bool xmem_program_found(const char *program);
/* True when pipe_dir/control is a socket or FIFO owned by root (the MPS control daemon's). */
bool xmem_mps_pipe_ok(const char *pipe_dir);
/* True when gpus is a list of GPU indices, "0" or "0,2". */
bool xmem_gpu_list_ok(const char *gpus);
/* The pids of a get_server_list answer (one a line); returns how many, at most max. */
int xmem_mps_server_pids(const char *text, pid_t *pids, int max);
/* The real uid of a /proc/PID/status text. */
int xmem_status_uid(const char *status, uid_t *uid);
/* The nvidia-cuda-mps-control commands that pin mb MiB on each GPU of gpus, for new servers
 * (set_default_device_pinned_mem_limit) and for each running server of the job's user. */
int xmem_mps_commands(const char *gpus, uint64_t mb, const pid_t *servers, int nservers, char *out,
                      size_t len);
/* Runs control (as the caller, root) against pipe_dir: get_server_list, then the commands
 * for the servers of uid. 0 only when both exit with status 0. */
int xmem_mps_apply(const char *control, const char *pipe_dir, const char *gpus, uint64_t mb,
                   uid_t uid, char *err, size_t errlen);

/* The first device's limit in MiB of a CUDA_MPS_PINNED_DEVICE_MEM_LIMIT value ("0=4096M",
 * "0=4G,1=4G"). */
int xmem_pinned_limit_mb(const char *text, uint64_t *mb);

/* The best level at most cap among the available ones (bit 1 << level); none at worst.
 * slurmstepd's enforcement (remote_enforce.c) asks it which level to try next. */
int xmem_enforce_best(int cap, unsigned available);
/* True when the applied level meets the required one (a name; NULL or "": none required).
 * An unknown name is met by no level: the node refuses rather than guess. */
bool xmem_enforce_meets(int applied, const char *required);

#endif
