/*
 * defaults.h — every default and limit of the xmem SPANK plugin, with the reason for it.
 */
#ifndef XMEM_PLUGIN_DEFAULTS_H
#define XMEM_PLUGIN_DEFAULTS_H

/* The defaults the plugin shares with xmemd and the client: XMEM_DEFAULT_SOCKET (unless
 * plugstack.conf says socket=) and XMEM_MAX_STEPS (the most optimizer steps a job may ask for).
 * A relative path because the plugin's core is built without the client library. */
#include "../daemon/contract/defaults.h"

/* Seconds sbatch waits for an estimate. A first profile of a real model takes tens of
 * seconds on a login node; a cached answer takes milliseconds. Past this, the job is
 * submitted unchanged: a user never waits longer than this for xmem. */
#define XMEM_PLUGIN_DEFAULT_TIMEOUT_S 120
/* An admin may raise it, but not so far that sbatch looks hung. */
#define XMEM_PLUGIN_MAX_TIMEOUT_S 3600

/* Seconds slurmstepd waits for xmemd at job end: accounting only, never worth delaying
 * the end of a job for. */
#define XMEM_PLUGIN_JOB_END_TIMEOUT_S 2

/* Longest accepted path (socket, script): sun_path is 108 bytes, keep one for the NUL. */
#define XMEM_PLUGIN_MAX_SOCKET_PATH 107

/* A batch script larger than this is not scanned for an entrypoint: real batch scripts
 * are a few KiB; a huge file is almost certainly not a script. */
#define XMEM_PLUGIN_MAX_SCRIPT_BYTES (1024 * 1024)

/* Largest declared budget, --xmem=SIZE: no GPU has 16 TiB; larger is a typo. */
#define XMEM_PLUGIN_MAX_BUDGET_BYTES (16ULL << 40)

/* NVML library slurmstepd opens for the measured peak: the driver's stable soname. */
#define XMEM_PLUGIN_DEFAULT_NVML "libnvidia-ml.so.1"
/* Milliseconds between two GPU memory samples: PyTorch's cached memory changes slowly (the
 * caching allocator keeps what it took), so 2 samples a second catch the plateau; a short
 * spike between two samples can be missed. Each sample costs a few NVML calls. */
#define XMEM_PLUGIN_DEFAULT_NVML_INTERVAL_MS 500
#define XMEM_PLUGIN_MIN_NVML_INTERVAL_MS 50
#define XMEM_PLUGIN_MAX_NVML_INTERVAL_MS 60000
/* Milliseconds slurm_spank_exit waits for the sampler thread: NVML calls take milliseconds;
 * a driver that hangs must not hold up the end of the job. */
#define XMEM_PLUGIN_NVML_JOIN_TIMEOUT_MS 2000
/* More processes than this on one GPU is a broken answer, not a workload. */
#define XMEM_PLUGIN_NVML_MAX_PROCESSES 4096
/* Parent links followed to decide whether a process descends from slurmstepd. */
#define XMEM_PLUGIN_MAX_PROC_DEPTH 64

/* Where scontrol is found unless plugstack.conf says scontrol=PATH: slurmstepd's PATH. */
#define XMEM_PLUGIN_DEFAULT_SCONTROL "scontrol"
/* Where squeue is found unless plugstack.conf says squeue=PATH: slurmstepd's PATH. */
#define XMEM_PLUGIN_DEFAULT_SQUEUE "squeue"
/* Milliseconds `scontrol show job` may take at job end before it is killed. */
#define XMEM_PLUGIN_SCONTROL_TIMEOUT_MS 3000
/* Bytes read from the end of each output file for a CUDA OOM message: the traceback and
 * the error are the last thing a crashed training script prints. */
#define XMEM_PLUGIN_OOM_SCAN_BYTES (64 * 1024)

/* Where cgroup v2 is mounted unless plugstack.conf says cgroup_root=PATH. */
#define XMEM_PLUGIN_DEFAULT_CGROUP_ROOT "/sys/fs/cgroup"
/* Longest cgroup directory path the plugin builds. */
#define XMEM_PLUGIN_MAX_CGROUP_PATH 4096
/* The legacy MPS control program unless plugstack.conf says mps_control=: root's PATH. */
#define XMEM_PLUGIN_DEFAULT_MPS_CONTROL "nvidia-cuda-mps-control"
/* Where the MPS control pipe is when the job's environment names no CUDA_MPS_PIPE_DIRECTORY:
 * the MPS default. */
#define XMEM_PLUGIN_DEFAULT_MPS_PIPE_DIR "/tmp/nvidia-mps"
/* Milliseconds one nvidia-cuda-mps-control call may take before it is killed: it answers
 * from memory in milliseconds; a hung daemon must not hold the job's tasks (held until the
 * limit is set) for long. */
#define XMEM_PLUGIN_MPS_CONTROL_TIMEOUT_MS 5000
/* MPS servers considered from one get_server_list: one per user per GPU in practice. */
#define XMEM_PLUGIN_MAX_MPS_SERVERS 64

/* oom_requeue=factor:F: above 10 a share is as big as a GPU anyway (a GPU has 10 shards or
 * 100 MPS percent in the usual gres.conf); 1 or less would rerun the same share. */
#define XMEM_REQUEUE_MAX_FACTOR 10
/* Largest share count and limit believed from a comment: no GPU has more MPS shares or more
 * than 16 TiB. */
#define XMEM_REQUEUE_MAX_SHARE_COUNT 100000
#define XMEM_REQUEUE_MAX_LIMIT_MB (16ULL << 20)

#endif
