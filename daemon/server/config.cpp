/*
 * config.cpp — strict YAML loading. Each top-level key has one entry in a table (name,
 * handler); anything not in a table is an error pointing at its line. Values are checked for
 * type and range where they are read, so every message names FILE:LINE and the dotted key.
 */
#include "config.h"
#include "defaults.h"
#include "log.h"
#include "sha256.h"

#include "analysis/paths.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <set>
#include <fstream>
#include <unistd.h>
#include <functional>
#include <sstream>

namespace xmem::server
{

namespace
{

// One problem: "FILE:LINE: key: problem; fix". Every fail() names the fix, so no message
// leaves an administrator guessing.
struct ConfigError {
    int line; // 1-based; 0 = no position
    std::string key;
    std::string problem;
    std::string fix;
};
using Problems = std::vector<ConfigError>;

[[noreturn]] void fail(const YAML::Node &n, const std::string &key, const std::string &problem,
                       const std::string &fix)
{
    throw ConfigError{n.Mark().line + 1, key, problem, fix};
}

std::string range_fix(long long lo, long long hi)
{
    return "use a value from " + std::to_string(lo) + " to " + std::to_string(hi);
}

std::string scalar(const YAML::Node &n, const std::string &key)
{
    if (!n.IsScalar())
        fail(n, key, "expected a single value", "write one value, not a list or a mapping");
    return n.Scalar();
}

long long integer(const YAML::Node &n, const std::string &key, long long lo, long long hi)
{
    std::string s = scalar(n, key);
    std::size_t used = 0;
    long long v = 0;
    try {
        v = std::stoll(s, &used, 10);
    } catch (...) {
        used = 0;
    }
    if (used == 0 || used != s.size())
        fail(n, key, "invalid integer: " + s, "write a whole number; " + range_fix(lo, hi));
    if (v < lo || v > hi)
        fail(n, key, "out of range: " + s, range_fix(lo, hi));
    return v;
}

double number(const YAML::Node &n, const std::string &key, double lo, double hi)
{
    std::string s = scalar(n, key);
    std::size_t used = 0;
    double v = 0;
    try {
        v = std::stod(s, &used);
    } catch (...) {
        used = 0;
    }
    std::ostringstream range; // "0.5 to 65536", not std::to_string's "0.500000"
    range << "from " << lo << " to " << hi;
    if (used == 0 || used != s.size() || !std::isfinite(v))
        fail(n, key, "invalid number: " + s, "write a number " + range.str());
    if (v < lo || v > hi)
        fail(n, key, "out of range: " + s, "use a number " + range.str());
    return v;
}

bool boolean(const YAML::Node &n, const std::string &key)
{
    std::string s = scalar(n, key);
    if (s == "true" || s == "yes" || s == "on")
        return true;
    if (s == "false" || s == "no" || s == "off")
        return false;
    fail(n, key, "invalid boolean: " + s, "use true or false");
}

std::string path(const YAML::Node &n, const std::string &key)
{
    std::string s = scalar(n, key);
    if (s.empty() || s[0] != '/')
        fail(n, key, "must be an absolute path: " + s, "write the full path, starting with /");
    if (s.size() > 4095)
        fail(n, key, "path too long", "use a path under 4096 characters");
    return s;
}

std::string name(const YAML::Node &n, const std::string &key)
{
    std::string s = scalar(n, key);
    if (s.empty() || s.size() > 63)
        fail(n, key, "must be 1 to 63 characters: " + s, "use a name of 1 to 63 characters");
    for (char c : s)
        if (!(isalnum((unsigned char)c) || c == '-' || c == '_' || c == '.'))
            fail(n, key, "invalid character in '" + s + "'", "use letters, digits, - _ .");
    return s;
}

// A level name of daemon/contract/enforcement.h.
int enforcement(const YAML::Node &n, const std::string &key)
{
    std::string s = scalar(n, key);
    int level = xmem_enforcement_parse(s.c_str());
    if (level < 0)
        fail(n, key, "invalid value: " + s, "use none, client, mps-server or dmem");
    return level;
}

using Handler = std::function<void(const YAML::Node &, const std::string &)>;
struct KeyRule {
    const char *key;
    Handler handle;
};

// One key's problem does not hide the next: each key's is added to `out` and the walk goes on,
// so --check-config lists every problem of a file at once. A map that is no map throws.
void walk(const YAML::Node &map, const std::string &prefix, const std::vector<KeyRule> &rules,
          Problems &out)
{
    if (!map.IsMap())
        fail(map, prefix.empty() ? "(top level)" : prefix, "expected a mapping of keys",
             "write one 'key: value' per line, indented under it");
    std::set<std::string> seen; // YAML keeps both of a repeated key: which one is meant?
    for (auto it = map.begin(); it != map.end(); ++it) {
        std::string k = it->first.as<std::string>();
        std::string dotted = prefix.empty() ? k : prefix + "." + k;
        try {
            if (!seen.insert(k).second)
                fail(it->first, dotted, "given twice", "keep one");
            const KeyRule *rule = nullptr;
            for (const auto &r : rules)
                if (k == r.key)
                    rule = &r;
            if (!rule)
                fail(it->first, dotted, "unknown key",
                     "check its spelling and place against etc/xmem.yaml, which lists the keys");
            if (it->second.IsNull())
                fail(it->first, dotted, "missing value", "give it a value or remove the key");
            rule->handle(it->second, dotted);
        } catch (const ConfigError &e) {
            out.push_back(e);
        }
    }
}

// A target's memory is the catalog's (policy.h); a memory_gb written in an older file is kept
// only to be checked against it once the catalog is read (config_read_catalog).
void parse_target(const YAML::Node &n, const std::string &key, GpuTarget &t, Problems &out)
{
    walk(n, key,
         {{"gpu",
           [&](auto &v, auto &k) {
               t.gpu = name(v, k);
               t.lines.gpu = v.Mark().line + 1;
           }},
          {"memory_gb",
           [&](auto &v, auto &k) {
               t.stated_memory_gb = number(v, k, 0.5, 65536);
               t.lines.memory_gb = v.Mark().line + 1;
           }},
          {"shards_per_gpu",
           [&](auto &v, auto &k) { t.shards_per_gpu = (int)integer(v, k, 1, 1024); }},
          {"mps_per_gpu", [&](auto &v, auto &k) { t.mps_per_gpu = (int)integer(v, k, 1, 100); }},
          {"enforcement", [&](auto &v, auto &k) { t.enforcement = enforcement(v, k); }},
          {"whole_as_shares", [&](auto &v, auto &k) { t.whole_as_shares = boolean(v, k); }}},
         out);
}

void parse_policy(const YAML::Node &n, const std::string &key, Policy &p, Problems &out)
{
    walk(n, key,
         {{"mode",
           [&](auto &v, auto &k) {
               p.mode = scalar(v, k);
               if (p.mode != "shard" && p.mode != "mps" && p.mode != "whole")
                   fail(v, k, "invalid value: " + p.mode, "use shard, mps or whole");
           }},
          {"margin_percent",
           [&](auto &v, auto &k) { p.margin_percent = (int)integer(v, k, 0, 100); }},
          {"whole_gpu_above_percent",
           [&](auto &v, auto &k) { p.whole_gpu_above_percent = (int)integer(v, k, 1, 100); }},
          {"decision_ttl_seconds",
           [&](auto &v, auto &k) { p.decision_ttl_seconds = (int)integer(v, k, 10, 86400); }},
          {"held_deadline_s",
           [&](auto &v, auto &k) { p.held_deadline_s = (int)integer(v, k, 10, 86400); }},
          {"require_enforcement",
           [&](auto &v, auto &k) { p.require_enforcement = enforcement(v, k); }},
          {"default", [&](auto &v, auto &k) { parse_target(v, k, p.default_target, out); }},
          {"partitions",
           [&](auto &v, auto &k) {
               if (!v.IsMap())
                   fail(v, k, "expected a mapping of partitions",
                        "write one per line, NAME: {gpu: ..., shards_per_gpu: ...}");
               for (auto it = v.begin(); it != v.end(); ++it) {
                   std::string part = name(it->first, k);
                   p.partitions.emplace_back(part, GpuTarget{});
               }
           }}},
         out);
    // Partitions inherit missing keys from default, so parse them after default is known.
    // Those whose name was refused above are not in p.partitions: their keys are not read.
    if (n["partitions"] && n["partitions"].IsMap()) {
        const YAML::Node parts = n["partitions"];
        std::size_t i = 0;
        for (auto it = parts.begin(); it != parts.end() && i < p.partitions.size(); ++it, ++i) {
            GpuTarget t = p.default_target;
            t.stated_memory_gb = 0; // it described the default's GPU; each GPU's is the catalog's
            t.lines.memory_gb = 0;
            try {
                parse_target(it->second, key + ".partitions." + it->first.as<std::string>(), t,
                             out);
            } catch (const ConfigError &e) {
                out.push_back(e);
            }
            p.partitions[i].second = t;
        }
    }
}

void parse_limits(const YAML::Node &n, const std::string &key, SandboxLimits &l, Problems &out)
{
    walk(
        n, key,
        {{"address_space_mb",
          [&](auto &v, auto &k) { l.address_space_mb = integer(v, k, 64, 1LL << 30); }},
         {"cpu_seconds", [&](auto &v, auto &k) { l.cpu_seconds = (int)integer(v, k, 1, 86400); }},
         {"processes", [&](auto &v, auto &k) { l.processes = (int)integer(v, k, 1, 1 << 20); }},
         {"file_size_mb", [&](auto &v, auto &k) { l.file_size_mb = integer(v, k, 1, 1LL << 30); }},
         {"wall_seconds", [&](auto &v, auto &k) { l.wall_seconds = (int)integer(v, k, 1, 86400); }},
         {"nice", [&](auto &v, auto &k) { l.nice = (int)integer(v, k, 0, 19); }},
         {"output_kb", [&](auto &v, auto &k) { l.output_kb = integer(v, k, 1, 65536); }}},
        out);
}

std::vector<std::string> estimator(const YAML::Node &n, const std::string &key)
{
    if (!n.IsSequence() || n.size() == 0)
        fail(n, key, "expected a non-empty list", "write [/path/to/xmem-estimate, --json]");
    std::vector<std::string> argv;
    for (const auto &a : n)
        argv.push_back(scalar(a, key));
    if (argv[0].empty() || argv[0][0] != '/')
        fail(n, key, "the first element must be an absolute path: " + argv[0],
             "give the estimator's full path, e.g. /usr/local/bin/xmem-estimate");
    return argv;
}

// srun's path: the estimator gets its command as words separated by spaces.
std::string srun(const YAML::Node &n, const std::string &key)
{
    std::string s = path(n, key);
    if (s.find_first_of(" \t\n") != std::string::npos)
        fail(n, key, "a path with a space: " + s,
             "install srun (or a link to it) on a path with no space");
    return s;
}

// A renamed key is still read, with one warning naming the new one, so a site's file keeps
// working across the upgrade.
void deprecated_key(const Config &c, const YAML::Node &n, const std::string &key, const char *now)
{
    log_warn("%s:%d: %s: deprecated, renamed %s (still read; rename it in the file)",
             c.path.c_str(), n.Mark().line + 1, key.c_str(), now);
}

void parse_top(const YAML::Node &root, Config &c, Problems &out)
{
    walk(root, "",
         {{"socket", [&](auto &v, auto &k) { c.socket = path(v, k); }},
          {"lockfile", [&](auto &v, auto &k) { c.lockfile = path(v, k); }},
          {"database", [&](auto &v, auto &k) { c.database = path(v, k); }},
          {"munge_socket", [&](auto &v, auto &k) { c.munge_socket = path(v, k); }},
          {"log",
           [&](auto &v, auto &k) {
               c.log = scalar(v, k);
               if (c.log != "stderr" && c.log != "syslog")
                   fail(v, k, "invalid value: " + c.log, "use stderr or syslog");
           }},
          {"metrics_listen",
           [&](auto &v, auto &k) {
               c.metrics_listen = scalar(v, k);
               auto colon = c.metrics_listen.rfind(':');
               if (colon == std::string::npos || colon == 0)
                   fail(v, k, "expected HOST:PORT", "write it as, e.g., 127.0.0.1:9464");
               YAML::Node port = YAML::Load(c.metrics_listen.substr(colon + 1));
               try {
                   integer(port, k, 1, 65535);
               } catch (const ConfigError &) {
                   fail(v, k, "invalid port in " + c.metrics_listen, "use a port from 1 to 65535");
               }
           }},
          {"estimator",
           [&](auto &v, auto &k) {
               c.estimator = estimator(v, k);
               c.estimator_line = v.Mark().line + 1;
           }},
          {"profiler", // the key's name before "estimator"
           [&](auto &v, auto &k) {
               deprecated_key(c, v, k, "estimator");
               c.estimator = estimator(v, k);
               c.estimator_line = v.Mark().line + 1;
           }},
          {"torch", [&](auto &v, auto &k) { c.torch = name(v, k); }},
          {"steps", [&](auto &v, auto &k) { c.steps = (int)integer(v, k, 1, k_max_steps); }},
          {"iterations", // the key's name before "steps"
           [&](auto &v, auto &k) {
               deprecated_key(c, v, k, "steps");
               c.steps = (int)integer(v, k, 1, k_max_steps);
           }},
          {"allow_root", [&](auto &v, auto &k) { c.allow_root = boolean(v, k); }},
          {"interactive_budget_s",
           [&](auto &v, auto &k) { c.interactive_budget_s = (int)integer(v, k, 0, 60); }},
          {"max_concurrent",
           [&](auto &v, auto &k) { c.max_concurrent = (int)integer(v, k, 1, 64); }},
          {"max_per_user", [&](auto &v, auto &k) { c.max_per_user = (int)integer(v, k, 1, 64); }},
          {"queue_size", [&](auto &v, auto &k) { c.queue_size = (int)integer(v, k, 0, 100000); }},
          {"max_connections",
           [&](auto &v, auto &k) { c.max_connections = (int)integer(v, k, 4, 100000); }},
          {"limits", [&](auto &v, auto &k) { parse_limits(v, k, c.limits, out); }},
          {"profile_partition", [&](auto &v, auto &k) { c.profile_job.partition = name(v, k); }},
          {"profile_partition_fast", [&](auto &v, auto &k) { c.profile_job.fast = boolean(v, k); }},
          {"srun", [&](auto &v, auto &k) { c.profile_job.srun = srun(v, k); }},
          {"cache",
           [&](auto &v, auto &k) {
               walk(v, k,
                    {{"ttl_seconds",
                      [&](auto &v2, auto &k2) {
                          c.cache_ttl_seconds = (int)integer(v2, k2, 0, 365 * 86400);
                      }},
                     {"max_entries",
                      [&](auto &v2, auto &k2) {
                          c.cache_max_entries = (int)integer(v2, k2, 0, 10000000);
                      }}},
                    out);
           }},
          {"catalog",
           [&](auto &v, auto &k) {
               c.catalog = path(v, k);
               if (!xmem::analysis::is_regular_file(c.catalog))
                   fail(v, k, "no such file: " + c.catalog,
                        "give the path of the GPU catalog, gpus.yaml");
           }},
          {"calibration", [&](auto &v, auto &k) { c.calibration = path(v, k); }},
          {"policy_file", [&](auto &v, auto &k) { c.policy_file = path(v, k); }},
          {"policy", [&](auto &v, auto &k) { parse_policy(v, k, c.policy, out); }}},
         out);
    if (c.max_per_user > c.max_concurrent)
        out.push_back({root["max_per_user"].Mark().line + 1, "max_per_user",
                       std::to_string(c.max_per_user) + " is above max_concurrent " +
                           std::to_string(c.max_concurrent) +
                           " (one user cannot hold more slots than the node has)",
                       "lower max_per_user or raise max_concurrent"});
}

std::string message(const std::string &file, const ConfigError &e)
{
    return file + ":" + std::to_string(e.line) + ": " + e.key + ": " + e.problem + "; " + e.fix;
}

// Every problem of the YAML text, in file order. A syntax error ends the reading there: the
// parser cannot go on past it.
std::vector<std::string> parse_text(const std::string &file, const std::string &text, Config &c)
{
    Problems found;
    try {
        YAML::Node root = YAML::Load(text);
        // An empty file is refused, not read as the defaults: a file truncated by an editor
        // or a failed copy would otherwise reload silently as another socket, ledger and
        // limits. A site that wants the defaults runs xmemd without --config.
        if (root.IsNull())
            found.push_back({1, "(top level)",
                             "the config has no keys (an empty or truncated file?)",
                             "write the keys to set, as in etc/xmem.yaml"});
        else
            parse_top(root, c, found);
    } catch (const ConfigError &e) {
        found.push_back(e);
    } catch (const YAML::Exception &e) {
        found.push_back({e.mark.line + 1, "(syntax)", e.msg,
                         "mend the YAML at that line (indentation, a colon, quotes, brackets)"});
    }
    std::stable_sort(found.begin(), found.end(),
                     [](const ConfigError &a, const ConfigError &b) { return a.line < b.line; });
    std::vector<std::string> lines;
    for (const ConfigError &e : found)
        lines.push_back(message(file, e));
    return lines;
}

} // namespace

std::string config_calibration_path(const Config &c)
{
    if (!c.calibration.empty())
        return c.calibration;
    auto slash = c.database.rfind('/');
    std::string dir = slash == std::string::npos ? "." : c.database.substr(0, slash);
    return dir + "/" + k_calibration_file_name;
}

Config config_defaults()
{
    Config c;
    c.socket = k_default_socket;
    c.lockfile = k_default_lockfile;
    c.database = k_default_database;
    c.log = "stderr";
    c.estimator = {k_default_estimator, "--json"};
    c.steps = k_default_steps;
    c.allow_root = false;
    c.interactive_budget_s = k_default_interactive_budget_s;
    c.max_concurrent = k_default_max_concurrent;
    c.max_per_user = k_default_max_per_user;
    c.queue_size = k_default_queue_size;
    c.max_connections = k_default_max_connections;
    c.limits = {k_default_address_space_mb, k_default_cpu_seconds,  k_default_processes,
                k_default_file_size_mb,     k_default_wall_seconds, k_default_nice,
                k_default_output_kb};
    c.profile_job.srun = k_default_srun;
    c.cache_ttl_seconds = k_default_cache_ttl;
    c.cache_max_entries = k_default_cache_entries;
    return c;
}

Result<void> config_check_programs(const Config &c)
{
    std::string program = c.estimator.empty() ? std::string() : c.estimator[0];
    std::string why;
    if (access(program.c_str(), X_OK) != 0)
        why = strerror(errno);
    else if (!xmem::analysis::is_regular_file(program))
        why = "not a regular file";
    if (why.empty())
        return Result<void>::success();
    std::string where = c.path.empty() ? std::string("built-in defaults") : c.path;
    if (c.estimator_line > 0)
        where += ":" + std::to_string(c.estimator_line);
    return Result<void>::fail(where + ": estimator: " + program + " is not an executable file (" +
                              why + "); install xmem-estimate there or fix the key");
}

ConfigCheck config_check(const std::string &file)
{
    ConfigCheck check{config_defaults(), {}};
    std::ifstream in(file);
    if (!in) {
        check.problems.push_back(file + ": cannot read the config: " + strerror(errno));
        return check;
    }
    std::stringstream text;
    text << in.rdbuf();
    check.config.path = file;
    check.config.fingerprint = sha256_hex(text.str());
    check.problems = parse_text(file, text.str(), check.config);
    // The policy's GPUs are the catalog's: a GPU it lacks refuses the config like a bad key.
    // Read only once the keys are sound: a refused catalog or policy key would be read as
    // its default, and the catalog's complaint would be about a file the site never named.
    if (check.problems.empty())
        if (auto gpus = config_read_catalog(check.config); !gpus.ok())
            check.problems.push_back(gpus.error().message);
    return check;
}

Result<Config> config_load(const std::string &file)
{
    ConfigCheck check = config_check(file);
    if (check.problems.empty())
        return Result<Config>::ok(std::move(check.config));
    std::string first = check.problems.front();
    if (check.problems.size() > 1)
        first += " (and " + std::to_string(check.problems.size() - 1) + " more: xmemd --config " +
                 file + " --check-config lists them)";
    return Result<Config>::fail(first);
}

xmem::Result<void> config_policy_set(Policy &p, const std::string &key, const std::string &value)
{
    YAML::Node one; // {key: value}, a scalar as the file would hold it
    one[key] = value;
    Problems found;
    try {
        parse_policy(one, "policy", p, found);
    } catch (const ConfigError &e) {
        found.push_back(e);
    }
    if (found.empty())
        return xmem::Result<void>::success();
    const ConfigError &e = found.front();
    return xmem::Result<void>::fail(e.key + ": " + e.problem + "; " + e.fix);
}

} // namespace xmem::server
