// TorchVersion parsing and the per-release behaviour table (allocator.md 11).
#include "allocator/version.h"

#include <charconv>
#include <iterator>

namespace xmem::sim
{

namespace
{

// Reads a decimal number at the front of s; advances s past it.
bool take_number(std::string_view &s, int *out)
{
    const char *end = s.data() + s.size();
    auto [p, ec] = std::from_chars(s.data(), end, *out);
    if (ec != std::errc() || p == s.data())
        return false;
    s.remove_prefix(static_cast<size_t>(p - s.data()));
    return true;
}

// allocator.md 11, oldest first; the last is newest_known_release().
constexpr TorchVersion k_known_releases[] = {{1, 13}, {2, 0},  {2, 1},  {2, 2},  {2, 3}, {2, 4},
                                             {2, 5},  {2, 6},  {2, 7},  {2, 8},  {2, 9}, {2, 10},
                                             {2, 11}, {2, 12}, {2, 13}, {2, 14}, {2, 15}};

Result<TorchVersion> bad_version(std::string_view s, const char *why)
{
    return Result<TorchVersion>::fail("xmem: torch version '" + std::string(s) + "': " + why);
}

// 1.13 and 2.0 print "... reserved in total by PyTorch"; 2.1 introduced the "has a total
// capacity of" text; 2.2+ recommend expandable_segments; 2.10 and 2.11 changed the advice's
// variable name and link (allocator.md 4.12).
OomStyle oom_style_for(TorchVersion v)
{
    if (!v.at_least(2, 1))
        return OomStyle::v1_13;
    if (!v.at_least(2, 2))
        return OomStyle::v2_1;
    if (!v.at_least(2, 10))
        return OomStyle::v2_2;
    return v.at_least(2, 11) ? OomStyle::v2_11 : OomStyle::v2_10;
}

} // namespace

Result<TorchVersion> TorchVersion::parse(std::string_view s)
{
    std::string_view rest = s;
    TorchVersion v;
    if (!take_number(rest, &v.major) || rest.empty() || rest.front() != '.')
        return bad_version(s, "expected MAJOR.MINOR such as 2.6 or 1.13.1");
    rest.remove_prefix(1);
    if (!take_number(rest, &v.minor))
        return bad_version(s, "expected MAJOR.MINOR such as 2.6 or 1.13.1");
    // An optional ".patch", then a local/pre-release suffix ("+cu130", "a0+git...", "rc1").
    if (!rest.empty() && rest.front() == '.') {
        rest.remove_prefix(1);
        int patch = 0;
        if (!take_number(rest, &patch))
            return bad_version(s, "patch level is not a number");
    }
    if (!rest.empty() && rest.front() != '+' && rest.front() != 'a' && rest.front() != 'b' &&
        rest.front() != 'r' && rest.front() != '.' && rest.front() != 'd')
        return bad_version(s, "unexpected text after the version number");
    const bool supported = (v.major == 1 && v.minor == 13) || v.major == 2;
    if (!supported)
        return bad_version(s, "unsupported (xmem simulates torch 1.13 and 2.x)");
    return Result<TorchVersion>::ok(v);
}

std::string TorchVersion::str() const
{
    return std::to_string(major) + "." + std::to_string(minor);
}

VersionProfile profile_for(TorchVersion v)
{
    const bool v2 = v.at_least(2, 0);
    const bool newest = v.at_least(2, 9);
    VersionProfile p{};
    p.grammar = v2 ? ConfGrammar::v2 : ConfGrammar::v1_13;
    p.oom_style = oom_style_for(v);
    p.roundup_bypass_key = !v2;
    p.roundup_per_interval = v2;
    p.roundup_d1_returns_size = !v.at_least(2, 4);
    p.roundup_gt_fills_last_slot = v2 && !newest;
    p.backend_key = v2;
    p.expandable_segments = v.at_least(2, 1);
    p.max_non_split_rounding_key = v.at_least(2, 6);
    // 2.9.1's libc10 still says "must be > ", 2.10.0's "must be >= " (allocator.md 0).
    p.max_split_min_inclusive = v.at_least(2, 10);
    p.graph_reuse_key = newest;
    p.fraction_key = v.at_least(2, 10);
    p.large_segment_key = v.at_least(2, 11);
    p.oom_rejection = v.at_least(2, 12);
    p.pinned_cache_keys = v.at_least(2, 13);
    p.expandable_reserve_keys = v.at_least(2, 15);
    p.fraction_one_is_unlimited = newest;
    p.requested_bytes = v2;
    p.device_counters = v2;
    return p;
}

bool is_known_release(TorchVersion v)
{
    for (TorchVersion k : k_known_releases)
        if (k == v)
            return true;
    return false;
}

TorchVersion newest_known_release()
{
    return *std::prev(std::end(k_known_releases));
}

std::string known_releases_text()
{
    std::string text;
    for (TorchVersion k : k_known_releases)
        text += (text.empty() ? "" : ", ") + k.str();
    return text;
}

Result<JobTorch> rules_for_job_torch(std::string_view job_version)
{
    auto v = TorchVersion::parse(job_version);
    if (!v.ok())
        return Result<JobTorch>::fail(v.error());
    if (is_known_release(v.value()))
        return Result<JobTorch>::ok(JobTorch{v.value(), false});
    if (v.value().at_least(newest_known_release().major, newest_known_release().minor))
        return Result<JobTorch>::ok(JobTorch{newest_known_release(), true});
    return Result<JobTorch>::fail("xmem: torch version '" + std::string(job_version) +
                                  "': not a release xmem knows (known: " + known_releases_text() +
                                  "; pass --torch)");
}

} // namespace xmem::sim
