// TorchVersion: which PyTorch release the simulator mirrors, and VersionProfile: every
// behaviour that differs between releases (allocator.md 11), derived from the version
// in one place so the allocator asks "does this release do X?" instead of comparing numbers.
#pragma once

#include <string>
#include <string_view>

#include "common/result.h"

namespace xmem::sim
{

struct TorchVersion {
    int major = 2;
    int minor = 6;

    // Accepts "1.13", "1.13.1", "2.4", "2.11.0+cu130", "2.1.0a0+git1234".
    // Supported: 1.13 and every 2.x (older releases lack the allocator behaviour mirrored here).
    static Result<TorchVersion> parse(std::string_view s);
    std::string str() const; // "major.minor"

    bool at_least(int maj, int min) const { return major > maj || (major == maj && minor >= min); }
    friend bool operator==(TorchVersion a, TorchVersion b)
    {
        return a.major == b.major && a.minor == b.minor;
    }
};

// How PYTORCH_CUDA_ALLOC_CONF is tokenised (allocator.md 2.2 vs allocator.md 2.3).
enum class ConfGrammar { v1_13, v2 };
// Which out-of-memory message text the release prints (allocator.md 4.12): v2_10 names
// PYTORCH_ALLOC_CONF in its advice, v2_11 links the docs.pytorch.org page.
enum class OomStyle { v1_13, v2_1, v2_2, v2_10, v2_11 };

// Release-dependent behaviour, one flag per row of allocator.md 11. "newest" = 2.9 and later
// (the newest code read, allocator.md 0); 2.7–2.8 were not read and are treated like 2.6.
// The *_key flags say from which release PYTORCH_CUDA_ALLOC_CONF accepts a key (allocator.md
// 2.3; 2.9–2.15 read from the wheels' headers and libc10 strings, allocator.md 0).
struct VersionProfile {
    ConfGrammar grammar;
    OomStyle oom_style;
    bool roundup_bypass_key;         // roundup_bypass_threshold_mb (1.13, allocator.md 2.2)
    bool roundup_per_interval;       // 16 per-interval division slots (2.0+, PR #87290)
    bool roundup_d1_returns_size;    // D=1 leaves the size unrounded (< 2.4, fixed by PR #126830)
    bool roundup_gt_fills_last_slot; // '>:D' overwrites the last listed slot (2.0–2.8 bug)
    bool backend_key;                // backend:native|cudaMallocAsync (2.0+)
    bool expandable_segments;        // expandable_segments key and behaviour (2.1+)
    bool max_non_split_rounding_key; // max_non_split_rounding_mb (2.6+, PR #136174)
    bool max_split_min_inclusive;    // max_split_size_mb >= 20 accepted (2.10+) vs > 20
    bool graph_reuse_key;            // graph_capture_record_stream_reuse (2.9+)
    bool fraction_key;               // per_process_memory_fraction, pinned_reserve_... (2.10+)
    bool large_segment_key;          // large_segment_size_mb (2.11+, PR #172056)
    bool oom_rejection;              // throw_on_cudamalloc_oom, pinned_free_catch_all keys and
                                     // the num_oom_rejections stat (2.12+)
    bool pinned_cache_keys;          // pinned_max_round_threshold_mb, pinned_max_cached_size_mb
                                     // (2.13+)
    bool expandable_reserve_keys;    // expandable_segments_reserve[_by_class] (2.15+, refused)
    bool fraction_one_is_unlimited;  // fraction 1.0 = no limit and no GC (newest)
    bool requested_bytes;            // requested_bytes.* stats (2.0+, PR #88575)
    bool device_counters;            // num_sync_all_streams, num_device_alloc/free (2.0+)
};

VersionProfile profile_for(TorchVersion v);

// The releases whose allocator the simulator mirrors (allocator.md 11): 2.9 is the newest
// read in source; 2.7-2.8 behave as 2.6; 2.10-2.15 as 2.9 plus the differences their wheels'
// headers and libc10 strings show (allocator.md 0).
// --torch accepts only these ("2.99" is a typo more often than a release), listed by
// known_releases_text() in its messages.
bool is_known_release(TorchVersion v);
TorchVersion newest_known_release();
std::string known_releases_text(); // "1.13, 2.0, ..., 2.15"

// The rules for a job's own torch (the trace's `M torch`): its release when known; a release
// newer than every known one gets the newest known rules, with newer_than_known set so the
// caller says so; an older or malformed one is an error.
struct JobTorch {
    TorchVersion rules;
    bool newer_than_known = false;
};
Result<JobTorch> rules_for_job_torch(std::string_view job_version);

} // namespace xmem::sim
