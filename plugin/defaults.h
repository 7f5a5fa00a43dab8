/*
 * defaults.h — every default and limit of the xmem SPANK plugin, with the reason for it.
 */
#ifndef XMEM_PLUGIN_DEFAULTS_H
#define XMEM_PLUGIN_DEFAULTS_H

/* Where xmemd listens unless plugstack.conf says socket=. Same as the client library. */
#define XMEM_PLUGIN_DEFAULT_SOCKET "/run/xmem/xmemd.sock"

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

/* Most words kept from one entrypoint command line. */
#define XMEM_PLUGIN_MAX_ARGV 256

/* Largest declared budget, --xmem=SIZE: no GPU has 16 TiB; larger is a typo. */
#define XMEM_PLUGIN_MAX_BUDGET_BYTES (16ULL << 40)

#endif
