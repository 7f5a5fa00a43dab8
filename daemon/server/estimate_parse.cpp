// estimate_parse.cpp — strict validation of an estimate request body (docs/protocol.md).
#include "estimate_job.h"

#include "contract/request_env.h"
#include "defaults.h"

namespace xmem::server
{

namespace
{

const char *const k_relevant_env[] = {XMEM_REQUEST_ENV_NAMES};
constexpr std::size_t k_max_argv = 1024;
constexpr std::size_t k_max_path = 4096;

bool valid_name(const std::string &s)
{
    if (s.empty() || s.size() > 63)
        return false;
    for (char c : s)
        if (!(isalnum((unsigned char)c) || c == '-' || c == '_' || c == '.'))
            return false;
    return true;
}

bool opt_name(const nlohmann::json &j, const char *key, std::string &out, std::string &why)
{
    if (!j.contains(key) || j[key].is_null())
        return true;
    if (!j[key].is_string() || !valid_name(j[key].get<std::string>())) {
        why = std::string("xmem: ") + key +
              ": expected a name of letters, digits, - _ . "
              "(at most 63)";
        return false;
    }
    out = j[key].get<std::string>();
    return true;
}

bool has_nul(const std::string &s)
{
    return s.find('\0') != std::string::npos;
}

} // namespace

bool estimate_parse(const nlohmann::json &j, EstimateRequest &r, std::string &why)
{
    if (!j.contains("argv") || !j["argv"].is_array() || j["argv"].empty() ||
        j["argv"].size() > k_max_argv) {
        why = "xmem: argv: expected a non-empty list of strings (the entrypoint command)";
        return false;
    }
    for (const auto &a : j["argv"]) {
        if (!a.is_string() || has_nul(a.get<std::string>())) {
            why = "xmem: argv: every element must be a string without NUL bytes";
            return false;
        }
        r.argv.push_back(a.get<std::string>());
    }
    if (r.argv[0].empty()) {
        why = "xmem: argv: the command name is empty";
        return false;
    }
    if (!j.contains("cwd") || !j["cwd"].is_string() || j["cwd"].get<std::string>().empty() ||
        j["cwd"].get<std::string>()[0] != '/' || j["cwd"].get<std::string>().size() > k_max_path ||
        has_nul(j["cwd"].get<std::string>())) {
        why = "xmem: cwd: expected the absolute path of the job's working directory";
        return false;
    }
    r.cwd = j["cwd"].get<std::string>();
    if (j.contains("script") && j["script"].is_string())
        r.script = j["script"].get<std::string>().substr(0, k_max_path);
    if (j.contains("env") && !j["env"].is_null()) {
        if (!j["env"].is_object()) {
            why = "xmem: env: expected an object of variable names to values";
            return false;
        }
        for (const char *k : k_relevant_env) // fixed order: stable cache keys
            if (j["env"].contains(k)) {
                if (!j["env"][k].is_string() || has_nul(j["env"][k].get<std::string>())) {
                    why = std::string("xmem: env.") + k + ": expected a string";
                    return false;
                }
                r.env.emplace_back(k, j["env"][k].get<std::string>());
            }
    }
    if (!opt_name(j, "gpu", r.gpu, why) || !opt_name(j, "partition", r.partition, why) ||
        !opt_name(j, "torch", r.torch, why))
        return false;
    // "iterations" is the field's name before "steps", still sent by older clients.
    const char *steps = j.contains("steps") ? "steps" : "iterations";
    if (j.contains(steps)) {
        if (!j[steps].is_number_integer() || j[steps].get<int64_t>() < 0 ||
            j[steps].get<int64_t>() > k_max_steps) {
            why = std::string("xmem: ") + steps +
                  ": expected an integer from 0 (site default) to " + std::to_string(k_max_steps);
            return false;
        }
        r.steps = j[steps].get<int>();
    }
    if (j.contains("check_only"))
        r.check_only = j["check_only"].is_boolean() && j["check_only"].get<bool>();
    if (j.contains("deadline_ms")) {
        if (!j["deadline_ms"].is_number_integer() || j["deadline_ms"].get<int64_t>() <= 0) {
            why = "xmem: deadline_ms: expected a positive integer";
            return false;
        }
        r.deadline_ms = (int)std::min<int64_t>(j["deadline_ms"].get<int64_t>(), INT32_MAX);
    }
    return true;
}

} // namespace xmem::server
