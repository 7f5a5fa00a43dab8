/*
 * defaults.h — every default and limit xmemd uses, each with the reason for its value.
 * A config key (etc/xmem.yaml) overrides the ones marked "key:". Defaults other components
 * share (socket, steps, GPU) are defined once in contract/defaults.h, with their reasons.
 */
#ifndef XMEMD_DEFAULTS_H
#define XMEMD_DEFAULTS_H

#include "contract/defaults.h"

#include <cstddef>
#include <cstdint>

namespace xmem::server
{

// key: socket. Under systemd's RuntimeDirectory=xmem, created 0755 root:root.
constexpr const char *k_default_socket = XMEM_DEFAULT_SOCKET;
// key: lockfile. Beside the socket: one daemon per socket.
constexpr const char *k_default_lockfile = "/run/xmem/xmemd.lock";
// key: database. Survives reboots; StateDirectory=xmem in the unit.
constexpr const char *k_default_database = "/var/lib/xmem/ledger.sqlite";
// key: calibration. Its default name, in the database's directory: both are xmemd's state,
// learnt from the jobs it saw, and StateDirectory= keeps them across reboots.
constexpr const char *k_calibration_file_name = "calibration.yaml";
// xmem calibrate --target-oom-rate: one packed job in a hundred may outgrow its share. Such a
// job is requeued once on its whole GPU (docs/enforcement.md), which costs one short re-run;
// a margin that made it rarer would hold memory back from every other job on the GPU.
constexpr double k_calibrate_target_oom_rate = 0.01;
// xmem calibrate --min-pairs: below 30 measured jobs of a GPU type (or account) the largest
// error of a handful of jobs, that is chance, would set the margin; no proposal is made.
constexpr std::size_t k_calibrate_min_pairs = 30;
// The largest margin calibrate proposes and a calibration file may hold: policy.margin_percent's
// own bound. A job that needs more than twice its limit is better kept on its whole GPU.
constexpr int k_calibrate_max_percent = 100;
// --config default: the file Slurm admins already manage.
constexpr const char *k_default_config = "/etc/slurm/xmem.yaml";
// key: estimator. The estimate pipeline (daemon/estimate), installed to libexec.
constexpr const char *k_default_estimator = XMEM_LIBEXECDIR "/xmem-estimate";
// Debian's slurm-client puts it here; a site with another prefix sets the srun key.
constexpr const char *k_default_srun = "/usr/bin/srun";

// key: max_concurrent. Each profile is a CPU-heavy PyTorch run; a login node has a few cores.
constexpr int k_default_max_concurrent = 2;
// key: max_per_user. One user must not take every profiling slot.
constexpr int k_default_max_per_user = 1;
// key: queue_size. Beyond this the answer is an immediate "busy", never a hang.
constexpr int k_default_queue_size = 64;
// key: max_connections. Bounds fds and memory a flood of clients can take.
constexpr int k_default_max_connections = 1024;
// key: steps. Optimizer steps profiled; a request may ask for 1..k_max_steps.
constexpr int k_default_steps = XMEM_DEFAULT_STEPS;
constexpr int k_max_steps = XMEM_MAX_STEPS;
// Threadpool threads beyond profiling slots: cache keys, MUNGE signing.
constexpr int k_threadpool_spare = 4;
// libuv caps its threadpool at 1024 (1.44); we stay far below.
constexpr int k_max_threadpool = 128;

// Sandbox limits (key: limits.*). Reasons: a CPU profile of a real model needs several GiB of
// address space (PyTorch reserves large virtual ranges) and a few minutes; a profile that
// forks hundreds of processes or writes gigabytes is broken or hostile.
constexpr uint64_t k_default_address_space_mb = 16384;
constexpr int k_default_cpu_seconds = 600;
constexpr int k_default_processes = 256;
constexpr uint64_t k_default_file_size_mb = 1024;
constexpr int k_default_wall_seconds = 600;
constexpr int k_default_nice = 10;
// Captured estimator stdout (the JSON result) and stderr (shown only on failure).
constexpr uint64_t k_default_output_kb = 256;
// Stderr tail kept for the user's message.
constexpr std::size_t k_message_tail_bytes = 400;

// key: cache.ttl_seconds. A day: torch/site changes invalidate through the key anyway.
constexpr int k_default_cache_ttl = 86400;
// key: cache.max_entries. An entry is ~1 KiB; 10 000 entries is ~10 MiB, flat.
constexpr int k_default_cache_entries = 10000;

// A deprecated policy `memory_gb:` is accepted when within this share of the catalog's
// memory.total: sites wrote the board's marketed size (40 for an A100 40GB, whose nvidia-smi
// total is 39.6 GiB; 80 for an H100's 79.6); a figure further off is another GPU's or a typo.
constexpr double k_memory_gb_agreement_percent = 2.0;

// A client must deliver a whole frame within this long (slow-loris bound).
constexpr int k_frame_timeout_ms = 10000;
// A reply not drained by the client within this long closes the connection.
constexpr int k_write_timeout_ms = 10000;
// Default per-request deadline if the client sends none; the largest it may ask for.
constexpr int k_default_deadline_ms = 15 * 60 * 1000;
// sbatch waits this long for an estimate before its job is queued held (docs/async.md): long
// enough for a cache hit or a fast-mode miss, short enough to feel interactive.
constexpr int k_default_interactive_budget_s = 2;
// After a failed scan of held jobs (slurmctld down, no scontrol), the next waits this long.
constexpr uint64_t k_held_scan_retry_ms = 5000;
// An ended estimate whose job squeue does not list yet (sbatch is still submitting it, or was
// killed and never will) is looked for again after a delay that doubles from the first to the
// last: a prompt narrowing for the first, a bounded squeue load for the second until the held
// deadline drops the entry.
constexpr uint64_t k_held_wait_first_ms = 250;
constexpr uint64_t k_held_wait_last_ms = 30000;
constexpr int k_max_deadline_ms = 24 * 60 * 60 * 1000;
// SIGTERM drain: in-flight profiles get this long before they are killed.
constexpr int k_drain_timeout_ms = 30000;
// Ledger group commit: rows queued while a commit runs go into the next transaction.
constexpr int k_ledger_batch_max = 512;
// passwd/group lookups are cached this long: NSS parsing dominated the cost of a cache hit;
// a group change reaches profiles within a minute.
constexpr int k_user_cache_seconds = 60;
// Repeated identical warnings are logged at most once per this many seconds.
constexpr int k_log_throttle_seconds = 10;
// Metrics HTTP request bound (we only answer GET /metrics).
constexpr std::size_t k_metrics_request_max = 8192;

// ---- issue 15, findings 2, 4 and 8: the cache key's reading and memory, the ledger's bytes.
// One file the cache key reads: a training script and its helpers are small; a "module" of
// megabytes is data, and hashing it would let one request stall a worker thread.
constexpr std::size_t k_key_max_file_bytes = 4u << 20;
// All files one request's key reads, remembered or not: 12 streams hashing 256 MiB each took
// another user's cache hit from 2 ms to 4.6 s; 16 MiB is ~30 ms of SHA-256 per request.
constexpr std::size_t k_key_max_request_bytes = 16u << 20;
// Local modules followed per request, and per file remembered (distinct names only).
constexpr std::size_t k_key_max_module_files = 64;
// A module name longer than a file name (NAME_MAX) cannot be a sibling file.
constexpr std::size_t k_key_max_module_name = 255;
// The memo of file digests: 4096 files, 8 MiB at most; a 4 MiB "import a,a,a,..." once took
// 65 MiB per request, never released. Scripts and helpers on one login node are few.
constexpr std::size_t k_key_memo_max_files = 4096;
constexpr std::size_t k_key_memo_max_bytes = 8u << 20;
// A refused request's text fields (cwd, entrypoint, script, options, message, breakdown) are
// kept to this many bytes each: enough to see what was asked; 200 refused 964 KB requests
// once added 185 MiB in 2.5 s, and a full disk refuses every user.
constexpr std::size_t k_ledger_refused_field_bytes = 4096;
// Ledger bytes one uid may write per window; beyond, its rows are summarised (outcome,
// times and numbers kept, text fields dropped). 64 MiB an hour is ~60 000 ordinary rows.
constexpr uint64_t k_ledger_user_bytes_per_window = 64ull << 20;
constexpr int k_ledger_window_seconds = 3600;
// Rows one uid may add in that window (issue 26, M3: rows, not bytes); past it requests are
// answered and counted, and one summary row says how many.
constexpr uint64_t k_ledger_user_rows_per_window = 10000;

// ---- issue 15, finding 7: descriptors. Under the default soft RLIMIT_NOFILE of 1024, 1100
// idle connections starved everyone before max_connections was reached; the soft limit is
// raised to the hard one at start (etc/xmemd.service sets LimitNOFILE=65536), and these fds
// stay free for the ledger, MUNGE, sandbox pipes and the metrics port.
constexpr int k_fd_reserve = 64;
// Connections one non-root uid may hold at once: sbatch holds one per submission, an array
// submission from a script a few; beyond, that user is answered too_many_connections.
constexpr int k_max_connections_per_user = 64;
// The metrics port: a Prometheus scrape is one short request; a client that holds the
// connection longer, or a crowd of them, is closed.
constexpr int k_metrics_timeout_ms = 5000;
constexpr int k_metrics_max_connections = 16;
// Of which one peer (a local uid, or a remote address: tcp_owner.h) may hold at most this
// many, so that one user's idle connections leave room for the scraper (issue 26, L4).
constexpr int k_metrics_max_per_peer = 4;

// ---- issue 15, finding 10: decisions bound to the batch script.
// The batch script xmemd hashes into a decision: Slurm's own default max_script_size is
// 4 MiB, so a larger file could never be submitted as the job the decision is for.
constexpr uint64_t k_decision_max_script_bytes = 4ull << 20;
// sbatch --wrap's command in a request: one argument of sbatch's, which Linux caps at
// MAX_ARG_STRLEN (32 pages, 128 KiB), so a longer one could not be the job's.
constexpr std::size_t k_max_wrap_bytes = 128 * 1024;

// ---- issue 15, findings 1, 3 and 11: the request path (what users send and profiles print).
// JSON nesting a profile's output or a request body may have, checked by a pre-scan before
// any parser or DOM sees the text: the real result nests 3 deep, and nlohmann's dump(),
// copy and compare recurse once per level, so 120 000 levels overflowed the loop's stack.
constexpr int k_json_max_depth = 32;
// The sandbox's keeper (sandbox.cpp): how long it tries to reap what it killed before it
// leaves the rest (a zombie whose tracer outside the sandbox never waits for it) to init,
// and how much longer xmemd waits for the keeper itself before killing it (issue 26, M2).
constexpr int k_keeper_reap_ms = 2000;
constexpr int k_keeper_exit_grace_ms = 1000;

// The batch script's preamble (preamble.cpp): lines per list and bytes per line a request
// may carry (contract/defaults.h says why).
constexpr std::size_t k_max_preamble_lines = XMEM_MAX_PREAMBLE_LINES;
constexpr std::size_t k_max_script_line_bytes = XMEM_MAX_SCRIPT_LINE_BYTES;
// The shell that runs it: bash, since `module` and `conda activate` are bash functions and
// batch scripts are bash scripts in practice. Absolute: the sandbox execs without a PATH search.
constexpr const char *k_preamble_shell = "/bin/bash";
// The exit status of the preamble shell when a line failed (with a marker line on stderr, so
// an estimator that exits with the same status is not taken for it).
constexpr int k_preamble_failed_status = 121;
// Most variables a preamble may leave to the estimator (a login shell has about 50).
constexpr std::size_t k_preamble_max_vars = 4096;
// What a failing line's message quotes of the line and of what the shell said.
constexpr std::size_t k_preamble_said_max_bytes = 200;

// The estimator's JSON result (stdout) parsed at most this size; beyond, profile_bad_output.
// Equal to the default capture bound: a site raising limits.output_kb still parses at most
// this much.
constexpr std::size_t k_profile_json_max_bytes = k_default_output_kb * 1024;
// A GPU name from the estimator is at most this long (the longest catalog alias is 30).
constexpr std::size_t k_gpu_name_max_bytes = 64;
// Per-user bounds on estimates in flight (queued, waiting for an identical profile, or
// running), so followers of an identical request count too: 400 abandoned 1 MB requests took
// 390 MiB. Cache hits are in flight for milliseconds, and a job array bursts: 128 keeps
// make bench-daemon's 100 concurrent clients of one user inside, and 400 outside.
constexpr int k_max_requests_in_flight_per_user = 128;
// Argv bytes (plus env and cwd) one user may have in flight: one maximal request
// (XMEM_MAX_REQUEST_BYTES = 1 MiB) always fits, a flood of them does not.
constexpr uint64_t k_max_request_bytes_in_flight_per_user = 4ull << 20;
// Preparations (cache key: hashing the entrypoint and its imports, up to 16 MiB; a hit is
// signed there too) one user may have on the threadpool at once, whatever else runs; the rest
// wait in order, bounded by k_max_requests_in_flight_per_user. Beyond it a user may take more
// threads only while more than k_prepare_reserve_threads stay idle, so one user's burst of
// cache hits keeps the pool, and another user's hit always finds a thread: 12 streams hashing
// 256 MiB each raised another user's hit latency from 2 ms to 4.6 s (finding 8), and a fixed
// bound of 2 raised the single-user bench's open-loop p99 from ~15 to ~35 ms.
constexpr int k_max_preparing_per_user = k_threadpool_spare / 2;
constexpr int k_prepare_reserve_threads = 1;
static_assert(k_max_preparing_per_user >= 1 && k_max_preparing_per_user < k_threadpool_spare,
              "one user's preparations must leave a spare thread to the others");
// `xmem status` lists at most this many in-flight requests (the rest are counted per user)
// and at most this many bytes of each argv: 400 queued 1 MB argvs made a 384 MB reply.
constexpr int k_status_max_entries = 50;
constexpr std::size_t k_status_argv_bytes = 200;

// ---- issue 15, finding 11 (job_end ranges): what a job_end report may claim. A task's exit
// code is 0..255, or 128+signal (up to 128+64) for a killed one; a job runs at most a year;
// no GPU has 1 PiB. Anything beyond is a forged or broken report, refused as bad_request.
constexpr int64_t k_job_end_max_exit_status = 255;
constexpr uint64_t k_job_end_max_elapsed_seconds = 366ull * 86400;
constexpr uint64_t k_job_end_max_peak_bytes = 1ull << 50;
// A job's uid is a uid_t; (uid_t)-1 means "no uid" to the kernel, so it names no job.
constexpr int64_t k_job_end_no_uid = 0xffffffffll;
// Slurm's job ids are uint32_t; a ledger id is an SQLite integer (int64). Larger figures were
// stored wrapped (2^64-1 as -1: issue 26, L8).
constexpr uint64_t k_job_end_max_job_id = 0xffffffffull;
constexpr uint64_t k_job_end_max_request_id = 0x7fffffffffffffffull;

} // namespace xmem::server
#endif
