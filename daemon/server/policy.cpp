// policy.cpp — the packing policy: its GPUs resolved against the GPU catalog when the config
// is loaded, and rendered as the Lua table job_submit.lua and cli_filter.lua load
// (`xmemd --render-policy OUT.lua`). The Lua shape is a contract: add keys, never rename.
#include "policy.h"
#include "calibration.h"
#include "config.h"
#include "defaults.h"
#include "log.h"

#include "analysis/catalog.h"
#include "analysis/paths.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace xmem::server
{

namespace
{

using Lines = std::vector<std::string>;

// "FILE:LINE: KEY: " as every config error starts; the line is left out when the value was
// not written in the file (built in, or inherited from a line reported already).
std::string where(const std::string &config, int line, const std::string &key)
{
    std::string file = config.empty() ? "(built-in defaults)" : config;
    return file + (line > 0 ? ":" + std::to_string(line) : "") + ": " + key + ": ";
}

std::string without_prefix(const std::string &message)
{
    return message.rfind("xmem: ", 0) == 0 ? message.substr(6) : message;
}

std::string catalog_names(const analysis::Catalog &catalog)
{
    std::string names;
    for (const analysis::GpuSpec &gpu : catalog.gpus())
        names += (names.empty() ? "" : ", ") + gpu.name;
    return names;
}

std::string gib(uint64_t mib)
{
    char text[32];
    snprintf(text, sizeof text, "%.1f GiB", (double)mib / 1024.0);
    return text;
}

// The catalog's memory for target `t` (written as `key` in the file), or the one-line error.
// A deprecated memory_gb that agrees is accepted with a warning in `warnings`.
xmem::Result<void> resolve_target(GpuTarget &t, const std::string &key,
                                  const analysis::Catalog &catalog, const std::string &config,
                                  Lines &warnings)
{
    auto spec = catalog.find(t.gpu);
    if (!spec.ok())
        return xmem::Result<void>::fail(where(config, t.lines.gpu, key + ".gpu") + "unknown GPU '" +
                                        t.gpu + "'; the catalog (" + catalog.path() +
                                        ") has: " + catalog_names(catalog));
    t.memory_mib = spec.value().total_bytes >> 20;
    t.catalog_name = spec.value().name;
    if (t.stated_memory_gb <= 0)
        return xmem::Result<void>::success();
    double stated_mib = t.stated_memory_gb * 1024.0;
    double off = std::fabs(stated_mib - (double)t.memory_mib);
    std::ostringstream stated;
    stated << t.stated_memory_gb;
    std::string facts = spec.value().name + " has " + std::to_string(t.memory_mib) + " MiB (" +
                        gib(t.memory_mib) + ") in the GPU catalog (" + catalog.path() + ")";
    if (off * 100.0 > (double)t.memory_mib * k_memory_gb_agreement_percent)
        return xmem::Result<void>::fail(where(config, t.lines.memory_gb, key + ".memory_gb") +
                                        stated.str() + " disagrees with the catalog: " + facts +
                                        "; delete memory_gb (the catalog is the only source "
                                        "of GPU memory) or correct the catalog");
    warnings.push_back(where(config, t.lines.memory_gb, key + ".memory_gb") +
                       "deprecated: " + facts + ", and that is what is used; delete the key");
    return xmem::Result<void>::success();
}

bool lua_identifier(const std::string &s)
{
    static const char *const reserved[] = {
        "and", "break",    "do",     "else", "elseif", "end",   "false",
        "for", "function", "if",     "in",   "local",  "nil",   "not",
        "or",  "repeat",   "return", "then", "true",   "until", "while"};
    if (s.empty() || isdigit((unsigned char)s[0]))
        return false;
    for (char c : s)
        if (!(isalnum((unsigned char)c) || c == '_'))
            return false;
    for (const char *r : reserved)
        if (s == r)
            return false;
    return true;
}

std::string lua_key(const std::string &s)
{
    // Names are restricted to [A-Za-z0-9._-] by the config parser, so quoting is enough.
    return lua_identifier(s) ? s : "[\"" + s + "\"]";
}

// The margins table (none when nothing is calibrated), keyed by each GPU's catalog name and
// by every other name a target gives it (an alias), since share() looks a margin up by the
// target's `gpu`.
std::string margins(const Policy &p)
{
    if (p.margins.empty())
        return "";
    std::ostringstream o;
    o << "  margins = {\n";
    std::vector<const GpuTarget *> targets{&p.default_target};
    for (const auto &[name, t] : p.partitions)
        targets.push_back(&t);
    for (const GpuMargin &m : p.margins) {
        std::vector<std::string> keys{m.gpu};
        for (const GpuTarget *t : targets)
            if (t->catalog_name == m.gpu &&
                std::find(keys.begin(), keys.end(), t->gpu) == keys.end())
                keys.push_back(t->gpu);
        std::ostringstream accounts;
        for (const auto &[name, percent] : m.accounts)
            accounts << " [\"" << name << "\"] = " << percent << ",";
        for (const std::string &key : keys)
            o << "    [\"" << key << "\"] = { percent = " << m.percent << ", accounts = {"
              << accounts.str() << " } },\n";
    }
    o << "  },\n";
    return o.str();
}

std::string target(const GpuTarget &t)
{
    std::ostringstream o;
    o << "{ gpu = \"" << t.gpu << "\", memory_mb = " << t.memory_mib
      << ", shards_per_gpu = " << t.shards_per_gpu << ", mps_per_gpu = " << t.mps_per_gpu
      << ", enforcement = \"" << xmem_enforcement_name(t.enforcement) << "\""
      << (t.whole_as_shares ? "" : ", whole_as_shares = false") << " }";
    return o.str();
}

// The levels in order, from enforcement.h: the policy's Lua compares ranks in this list.
std::string enforcement_levels()
{
    std::string list;
    for (int i = 0; i < XMEM_ENFORCE_LEVELS; i++)
        list += std::string(i ? ", " : "") + "\"" + xmem_enforcement_names[i] + "\"";
    return "{ " + list + " }";
}

} // namespace

xmem::Result<Lines> policy_resolve(Policy &p, const analysis::Catalog &catalog,
                                   const std::string &config)
{
    Lines warnings;
    auto r = resolve_target(p.default_target, "policy.default", catalog, config, warnings);
    for (auto &[name, t] : p.partitions)
        if (r.ok())
            r = resolve_target(t, "policy.partitions." + name, catalog, config, warnings);
    if (!r.ok())
        return xmem::Result<Lines>::fail(r.error());
    return xmem::Result<Lines>::ok(std::move(warnings));
}

xmem::Result<void> config_read_catalog(Config &c)
{
    // The catalog's own messages start "xmem: " and name its file and line; they follow ours.
    auto found = analysis::locate_catalog(c.catalog);
    if (!found.ok())
        return xmem::Result<void>::fail(where(c.path, 0, "catalog") +
                                        without_prefix(found.error().message) +
                                        " (or give its path as catalog: in the config)");
    auto catalog = analysis::Catalog::load(found.value());
    if (!catalog.ok())
        return xmem::Result<void>::fail(where(c.path, 0, "catalog") +
                                        without_prefix(catalog.error().message));
    c.catalog = found.value();
    auto warnings = policy_resolve(c.policy, catalog.value(), c.path);
    if (!warnings.ok())
        return xmem::Result<void>::fail(warnings.error());
    for (const std::string &line : warnings.value())
        log_warn("%s", line.c_str());
    auto learnt = calibration_load(config_calibration_path(c), catalog.value());
    if (!learnt.ok())
        return xmem::Result<void>::fail(learnt.error());
    c.policy.margins = std::move(learnt).value();
    return xmem::Result<void>::success();
}

const GpuTarget &policy_target(const Policy &p, const std::string &partition)
{
    for (const auto &[name, t] : p.partitions)
        if (name == partition)
            return t;
    return p.default_target;
}

uint64_t policy_gpu_bytes(const Policy &p, const std::string &gpu)
{
    if (p.default_target.gpu == gpu)
        return p.default_target.memory_mib << 20;
    for (const auto &[name, t] : p.partitions)
        if (t.gpu == gpu)
            return t.memory_mib << 20;
    return 0;
}

std::string policy_render_lua(const Policy &p, unsigned daemon_uid)
{
    std::ostringstream o;
    o << "-- Generated by xmemd --render-policy from xmem.yaml; do not edit.\n"
      << "return {\n"
      << "  version = 1, mode = \"" << p.mode << "\", margin_percent = " << p.margin_percent
      << ", whole_gpu_above_percent = " << p.whole_gpu_above_percent << ",\n"
      << "  decision_ttl_seconds = " << p.decision_ttl_seconds << ",\n"
      << "  held_deadline_s = " << p.held_deadline_s << ",\n"
      << "  enforcement_levels = " << enforcement_levels() << ",  -- weakest first\n"
      << "  require_enforcement = \"" << xmem_enforcement_name(p.require_enforcement) << "\",\n"
      << "  daemon_uid = " << daemon_uid
      << ",  -- uid xmemd runs as: the only uid whose MUNGE credentials are trusted\n"
      << "  default = " << target(p.default_target) << ",\n"
      << "  partitions = {";
    if (p.partitions.empty()) {
        o << "},\n";
    } else {
        o << "\n";
        for (const auto &[name, t] : p.partitions)
            o << "    " << lua_key(name) << " = " << target(t) << ",\n";
        o << "  },\n";
    }
    o << margins(p) << "}\n";
    return o.str();
}

xmem::Result<void> policy_write_lua(const Policy &p, unsigned daemon_uid, const std::string &path)
{
    auto written = file_replace(path, policy_render_lua(p, daemon_uid), 0644);
    if (!written.ok())
        return xmem::Result<void>::fail("xmem: policy: " + written.error().message);
    return written;
}

} // namespace xmem::server
