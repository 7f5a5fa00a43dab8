// AllocatorConfig::parse: PYTORCH_CUDA_ALLOC_CONF, one handler per key, driven by a table
// that also says which releases know the key (allocator.md 2).
#include "allocator/config.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "allocator/config_tokens.h"

namespace xmem::sim
{

using conf::conf_error;

namespace
{

// Walks the token list "key : value , key : value ...".
struct Cursor {
    const std::vector<std::string> &tokens;
    size_t i = 0;
    bool done() const { return i >= tokens.size(); }
    const std::string &peek() const { return tokens[i]; }
    std::string take() { return done() ? std::string() : tokens[i++]; }
};

struct ParseState {
    AllocatorConfig &cfg;
    const VersionProfile &profile;
    Cursor &cur;
    const std::string &key;
};

using Handler = Result<void> (*)(ParseState &);

Result<void> fail(const ParseState &s, const std::string &what)
{
    return Result<void>::fail(conf_error(s.key, what));
}

Result<void> read_megabytes(ParseState &s, uint64_t *out)
{
    const std::string v = s.cur.take();
    if (!conf::parse_uint(v, out))
        return fail(s, "expected a whole number of MiB (got '" + v + "')");
    return Result<void>::success();
}

// max_split_size_mb and max_non_split_rounding_mb share PyTorch's lower bound
// (allocator.md 2.2, 2.3): > 20 up to 2.6, >= 20 in the newest releases. Values are clamped so
// N·MiB cannot overflow.
Result<void> read_split_megabytes(ParseState &s, size_t *out)
{
    uint64_t mb = 0;
    if (auto r = read_megabytes(s, &mb); !r)
        return r;
    const uint64_t min_mb = kLargeBuffer / kMiB;
    if (s.profile.max_split_min_inclusive ? mb < min_mb : mb <= min_mb)
        return fail(s, std::string("must be ") +
                           (s.profile.max_split_min_inclusive ? ">= " : "> ") +
                           std::to_string(min_mb) + " (got " + std::to_string(mb) + ")");
    *out = std::min<uint64_t>(mb, kUnlimited / kMiB) * kMiB;
    return Result<void>::success();
}

Result<void> read_bool(ParseState &s, bool *out)
{
    const std::string v = s.cur.take();
    if (v != "True" && v != "False")
        return fail(s, "expected True or False (got '" + v + "')");
    *out = v == "True";
    return Result<void>::success();
}

Result<void> on_max_split_size(ParseState &s)
{
    return read_split_megabytes(s, &s.cfg.max_split_size);
}
Result<void> on_max_non_split_rounding(ParseState &s)
{
    return read_split_megabytes(s, &s.cfg.max_non_split_rounding);
}

Result<void> on_roundup_bypass_threshold(ParseState &s)
{
    uint64_t mb = 0;
    if (auto r = read_megabytes(s, &mb); !r)
        return r;
    s.cfg.roundup_bypass_threshold = std::min<uint64_t>(mb, kUnlimited / kMiB) * kMiB;
    return Result<void>::success();
}

Result<void> on_garbage_collection_threshold(ParseState &s)
{
    const std::string v = s.cur.take();
    double t = 0;
    if (!conf::parse_double(v, &t))
        return fail(s, "expected a number between 0 and 1 (got '" + v + "')");
    if (!(t > 0.0 && t < 1.0))
        return fail(s, "must be > 0 and < 1 (got " + v + ")");
    s.cfg.garbage_collection_threshold = t;
    return Result<void>::success();
}

Result<void> on_expandable_segments(ParseState &s)
{
    return read_bool(s, &s.cfg.expandable_segments);
}

Result<void> on_backend(ParseState &s)
{
    const std::string v = s.cur.take();
    if (v == "native")
        return Result<void>::success();
    if (v == "cudaMallocAsync")
        return fail(s,
                    "cudaMallocAsync is not simulated (the driver's pool has no caching-allocator "
                    "policy to mirror); profile with backend:native");
    return fail(s, "expected native or cudaMallocAsync (got '" + v + "')");
}

// Keys that do not change device-memory accounting: validated, then ignored (allocator.md 2.3).
Result<void> on_ignored_bool(ParseState &s)
{
    bool unused = false;
    return read_bool(s, &unused);
}
Result<void> on_ignored_uint(ParseState &s)
{
    const std::string v = s.cur.take();
    uint64_t unused = 0;
    if (!conf::parse_uint(v, &unused))
        return fail(s, "expected a whole number (got '" + v + "')");
    return Result<void>::success();
}

// throw_on_cudamalloc_oom:True (2.12+) rejects an allocation over the per-process limit before
// cudaMalloc ("preemptively rejected", counted in num_oom_rejections). Whether cached blocks are
// freed and the request retried first is in CUDACachingAllocator.cpp, which the wheel does not
// ship, so only the default is simulated (allocator.md 2.3).
Result<void> on_throw_on_cudamalloc_oom(ParseState &s)
{
    bool on = false;
    if (auto r = read_bool(s, &on); !r)
        return r;
    if (on)
        return fail(s, "True is not simulated for torch " + s.cfg.torch.str() +
                           ": how it cuts short the out-of-memory path is not known (remove it "
                           "or set it to False)");
    return Result<void>::success();
}

// Keys whose effect on device memory cannot be read without the release's allocator source
// (expandable_segments_reserve[_by_class], 2.15: how a smaller address reservation grows).
Result<void> on_unknowable(ParseState &s)
{
    s.cur.take();
    return fail(s, "not simulated for torch " + s.cfg.torch.str() +
                       ": how a smaller address reservation changes the growth of expandable "
                       "segments is not known (remove it)");
}

Result<void> on_per_process_memory_fraction(ParseState &s)
{
    const std::string v = s.cur.take();
    double f = 0;
    if (!conf::parse_double(v, &f) || !(f >= 0.0 && f <= 1.0))
        return fail(s, "expected a fraction between 0 and 1 (got '" + v + "')");
    s.cfg.memory_fraction = f;
    return Result<void>::success();
}

Result<void> on_large_segment_size(ParseState &s)
{
    uint64_t mb = 0;
    if (auto r = read_megabytes(s, &mb); !r)
        return r;
    if (mb == 0 || mb % 2 != 0)
        return fail(s, "must be a positive multiple of 2 MiB (got " + std::to_string(mb) + ")");
    const bool rounding_was_default = s.cfg.max_non_split_rounding == s.cfg.large_segment_size;
    s.cfg.large_segment_size = mb * kMiB;
    if (rounding_was_default)
        s.cfg.max_non_split_rounding = s.cfg.large_segment_size; // newest default
    return Result<void>::success();
}

// roundup_power2_divisions:D fills every slot; 2.x also takes [B1:D1,...,>:Dn] (allocator.md 2.3).
Result<void> read_divisions(ParseState &s, bool zero_allowed, uint64_t *out)
{
    const std::string v = s.cur.take();
    if (!conf::parse_uint(v, out) || (*out == 0 ? !zero_allowed : !conf::is_power_of_two(*out)))
        return fail(s, std::string("divisions must be ") + (zero_allowed ? "0 or " : "") +
                           "a power of two (got '" + v + "')");
    return Result<void>::success();
}

Result<void> read_interval_list(ParseState &s)
{
    auto &slots = s.cfg.roundup_power2_divisions;
    bool first_value = true;
    size_t last_index = 0;
    while (!s.cur.done() && s.cur.peek() != "]") {
        const std::string interval = s.cur.take();
        if (s.cur.take() != ":")
            return fail(s, "expected INTERVAL_MB:DIVISIONS inside [...] (near '" + interval + "')");
        uint64_t divisions = 0;
        if (auto r = read_divisions(s, true, &divisions); !r)
            return r;
        if (interval == ">") {
            // 2.0–2.8 fill from the last listed slot itself, overwriting it; newest from the
            // slot after it (allocator.md 2.3, 11).
            const size_t from = s.profile.roundup_gt_fills_last_slot ? last_index : last_index + 1;
            for (size_t i = from; i < slots.size(); ++i)
                slots[i] = divisions;
        } else {
            uint64_t mb = 0;
            if (!conf::parse_uint(interval, &mb) || !conf::is_power_of_two(mb))
                return fail(s, "intervals must be powers of two in MiB or '>' (got '" + interval +
                                   "')");
            size_t index = 0;
            while ((mb >> (index + 1)) != 0)
                ++index; // log2
            index = std::min(index, slots.size() - 1);
            if (first_value)
                std::fill(slots.begin(), slots.begin() + static_cast<std::ptrdiff_t>(index),
                          divisions);
            first_value = false;
            slots[index] = divisions;
            last_index = index;
        }
        if (!s.cur.done() && s.cur.peek() == ",")
            s.cur.take();
    }
    if (s.cur.take() != "]")
        return fail(s, "missing ']' at the end of the interval list");
    return Result<void>::success();
}

Result<void> on_roundup_power2_divisions(ParseState &s)
{
    if (s.profile.roundup_per_interval && s.cur.peek() == "[") {
        s.cur.take();
        return read_interval_list(s);
    }
    uint64_t divisions = 0;
    if (auto r = read_divisions(s, false, &divisions); !r)
        return r;
    s.cfg.roundup_power2_divisions.fill(divisions);
    return Result<void>::success();
}

struct KeySpec {
    const char *name;
    bool VersionProfile::*available; // nullptr = every release
    Handler handler;
};

const KeySpec kKeys[] = {
    {"max_split_size_mb", nullptr, on_max_split_size},
    {"roundup_power2_divisions", nullptr, on_roundup_power2_divisions},
    {"garbage_collection_threshold", nullptr, on_garbage_collection_threshold},
    {"roundup_bypass_threshold_mb", &VersionProfile::roundup_bypass_key,
     on_roundup_bypass_threshold},
    {"backend", &VersionProfile::backend_key, on_backend},
    {"expandable_segments", &VersionProfile::expandable_segments, on_expandable_segments},
    {"max_non_split_rounding_mb", &VersionProfile::max_non_split_rounding_key,
     on_max_non_split_rounding},
    {"release_lock_on_cudamalloc", &VersionProfile::backend_key, on_ignored_bool},
    {"pinned_use_cuda_host_register", &VersionProfile::backend_key, on_ignored_bool},
    {"pinned_use_background_threads", &VersionProfile::backend_key, on_ignored_bool},
    {"pinned_num_register_threads", &VersionProfile::backend_key, on_ignored_uint},
    {"graph_capture_record_stream_reuse", &VersionProfile::graph_reuse_key, on_ignored_bool},
    {"per_process_memory_fraction", &VersionProfile::fraction_key, on_per_process_memory_fraction},
    {"pinned_reserve_segment_size_mb", &VersionProfile::fraction_key, on_ignored_uint},
    {"large_segment_size_mb", &VersionProfile::large_segment_key, on_large_segment_size},
    {"throw_on_cudamalloc_oom", &VersionProfile::oom_rejection, on_throw_on_cudamalloc_oom},
    {"pinned_free_catch_all", &VersionProfile::oom_rejection, on_ignored_bool},
    {"pinned_max_round_threshold_mb", &VersionProfile::pinned_cache_keys, on_ignored_uint},
    {"pinned_max_cached_size_mb", &VersionProfile::pinned_cache_keys, on_ignored_uint},
    {"expandable_segments_reserve", &VersionProfile::expandable_reserve_keys, on_unknowable},
    {"expandable_segments_reserve_by_class", &VersionProfile::expandable_reserve_keys,
     on_unknowable},
};

std::string known_keys(const VersionProfile &p)
{
    std::string names;
    for (const KeySpec &k : kKeys) {
        if (k.available != nullptr && !(p.*k.available))
            continue;
        names += names.empty() ? "" : ", ";
        names += k.name;
    }
    return names;
}

const KeySpec *find_key(const std::string &name, const VersionProfile &p)
{
    for (const KeySpec &k : kKeys)
        if (name == k.name && (k.available == nullptr || p.*k.available))
            return &k;
    return nullptr;
}

Result<void> parse_item(AllocatorConfig &cfg, const VersionProfile &profile, Cursor &cur)
{
    const std::string key = cur.take();
    const KeySpec *spec = find_key(key, profile);
    if (spec == nullptr)
        return Result<void>::fail(conf_error(key, "unknown option for torch " + cfg.torch.str() +
                                                      " (known: " + known_keys(profile) + ")"));
    if (cur.take() != ":")
        return Result<void>::fail(conf_error(key, "expected ':' and a value after the key"));
    if (cur.done())
        return Result<void>::fail(conf_error(key, "missing value"));
    ParseState state{cfg, profile, cur, key};
    return spec->handler(state);
}

} // namespace

AllocatorConfig AllocatorConfig::defaults(TorchVersion v)
{
    AllocatorConfig cfg;
    cfg.torch = v;
    return cfg;
}

Result<AllocatorConfig> AllocatorConfig::parse(std::string_view alloc_conf, TorchVersion v)
{
    AllocatorConfig cfg = defaults(v);
    const VersionProfile profile = profile_for(v);
    auto tokens = conf::tokenize(alloc_conf, profile.grammar);
    if (!tokens)
        return Result<AllocatorConfig>::fail(tokens.error());
    Cursor cur{tokens.value()};
    while (!cur.done()) {
        if (cur.peek() == ",") { // tolerate empty items such as "a:1,,b:2" (1.13 does too)
            cur.take();
            continue;
        }
        if (auto r = parse_item(cfg, profile, cur); !r)
            return Result<AllocatorConfig>::fail(r.error());
        if (!cur.done() && cur.take() != ",")
            return Result<AllocatorConfig>::fail(
                conf_error(cur.tokens[cur.i - 1], "expected ',' between options"));
    }
    return Result<AllocatorConfig>::ok(cfg);
}

Result<void> AllocatorConfig::validate() const
{
    auto bad = [](const std::string &what) {
        return Result<void>::fail("xmem: allocator config: " + what);
    };
    if (memory_fraction && !(*memory_fraction >= 0.0 && *memory_fraction <= 1.0))
        return bad("memory fraction must be between 0 and 1 (got " +
                   std::to_string(*memory_fraction) + ")");
    if (device_total_bytes != 0 && device_used_outside_bytes > device_total_bytes)
        return bad("memory used outside the allocator (" +
                   std::to_string(device_used_outside_bytes) + " B) exceeds the device capacity (" +
                   std::to_string(device_total_bytes) + " B)");
    if (!(garbage_collection_threshold >= 0.0 && garbage_collection_threshold < 1.0))
        return bad("garbage_collection_threshold must be >= 0 and < 1");
    if (expandable_segments && !profile_for(torch).expandable_segments)
        return bad("expandable_segments needs torch 2.1 or newer (configured " + torch.str() + ")");
    if (large_segment_size == 0 || large_segment_size % kRoundLarge != 0)
        return bad("large_segment_size must be a positive multiple of 2 MiB");
    if (event_completion_delay == 0)
        return bad("event_completion_delay must be at least 1 malloc");
    for (size_t d : roundup_power2_divisions)
        if (d != 0 && !conf::is_power_of_two(d))
            return bad("roundup_power2_divisions must be 0 or powers of two");
    return Result<void>::success();
}

} // namespace xmem::sim
