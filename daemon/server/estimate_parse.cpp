// estimate_parse.cpp — strict validation of an estimate request body (docs/protocol.md).
#include "estimate_job.h"

#include "contract/request_env.h"
#include "defaults.h"

#include <algorithm>

namespace xmem::server
{

namespace
{

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

Result<void> opt_name(const nlohmann::json &j, const char *key, std::string &out)
{
    if (!j.contains(key) || j[key].is_null())
        return Result<void>::success();
    if (!j[key].is_string() || !valid_name(j[key].get<std::string>()))
        return Result<void>::fail(std::string("xmem: ") + key +
                                  ": expected a name of letters, digits, - _ . (at most 63)");
    out = j[key].get<std::string>();
    return Result<void>::success();
}

bool has_nul(const std::string &s)
{
    return s.find('\0') != std::string::npos;
}

// The kept variables (contract/request_env.h), in name order (a JSON object's order here):
// stable cache keys. Others are ignored, as the protocol says.
Result<void> parse_env(const nlohmann::json &j, EstimateRequest &r)
{
    if (!j.contains("env") || j["env"].is_null())
        return Result<void>::success();
    if (!j["env"].is_object())
        return Result<void>::fail("xmem: env: expected an object of variable names to values");
    for (const auto &[k, v] : j["env"].items()) {
        if (!xmem_request_env_kept(k.data(), k.size()) || r.env.size() >= XMEM_REQUEST_ENV_MAX_VARS)
            continue;
        if (!v.is_string() || has_nul(v.get<std::string>()))
            return Result<void>::fail("xmem: env." + k + ": expected a string");
        r.env.emplace_back(k, v.get<std::string>());
    }
    return Result<void>::success();
}

// [{"line": N, "text": "..."}]: script lines, one line each (no NUL, CR or newline).
Result<void> parse_lines(const nlohmann::json &j, const char *key, std::vector<ScriptLine> &out)
{
    if (!j.contains(key) || j[key].is_null())
        return Result<void>::success();
    auto bad = [key]() {
        return Result<void>::fail(std::string("xmem: ") + key + ": expected at most " +
                                  std::to_string(k_max_preamble_lines) +
                                  " {\"line\": N, \"text\": \"...\"} objects, each text one line "
                                  "of at most " +
                                  std::to_string(k_max_script_line_bytes) + " bytes");
    };
    if (!j[key].is_array() || j[key].size() > k_max_preamble_lines)
        return bad();
    for (const auto &l : j[key]) {
        if (!l.is_object() || !l.contains("line") || !l["line"].is_number_integer() ||
            !l.contains("text") || !l["text"].is_string())
            return bad();
        int64_t line = l["line"].get<int64_t>();
        std::string text = l["text"].get<std::string>();
        if (line < 1 || line > INT32_MAX || text.size() > k_max_script_line_bytes ||
            text.find_first_of(std::string("\0\r\n", 3)) != std::string::npos)
            return bad();
        out.push_back({(int)line, std::move(text)});
    }
    return Result<void>::success();
}

// "wrap": sbatch --wrap's command, whose script (xmem_wrap_script) the decision is bound to.
Result<void> parse_wrap(const nlohmann::json &j, EstimateRequest &r)
{
    if (!j.contains("wrap") || j["wrap"].is_null())
        return Result<void>::success();
    if (!j["wrap"].is_string() || j["wrap"].get<std::string>().empty() ||
        j["wrap"].get<std::string>().size() > k_max_wrap_bytes ||
        has_nul(j["wrap"].get<std::string>()))
        return Result<void>::fail("xmem: wrap: expected sbatch --wrap's command, at most " +
                                  std::to_string(k_max_wrap_bytes) + " bytes without NUL");
    if (!r.script.empty())
        return Result<void>::fail(
            "xmem: wrap: a request names a batch script or a --wrap command, not both");
    r.wrap = j["wrap"].get<std::string>();
    return Result<void>::success();
}

// Fills r from the body; the first invalid field is the error.
Result<void> parse_into(const nlohmann::json &j, EstimateRequest &r)
{
    if (!j.contains("argv") || !j["argv"].is_array() || j["argv"].empty() ||
        j["argv"].size() > k_max_argv)
        return Result<void>::fail(
            "xmem: argv: expected a non-empty list of strings (the entrypoint command)");
    for (const auto &a : j["argv"]) {
        if (!a.is_string() || has_nul(a.get<std::string>()))
            return Result<void>::fail(
                "xmem: argv: every element must be a string without NUL bytes");
        r.argv.push_back(a.get<std::string>());
    }
    if (r.argv[0].empty())
        return Result<void>::fail("xmem: argv: the command name is empty");
    if (!j.contains("cwd") || !j["cwd"].is_string() || j["cwd"].get<std::string>().empty() ||
        j["cwd"].get<std::string>()[0] != '/' || j["cwd"].get<std::string>().size() > k_max_path ||
        has_nul(j["cwd"].get<std::string>()))
        return Result<void>::fail(
            "xmem: cwd: expected the absolute path of the job's working directory");
    r.cwd = j["cwd"].get<std::string>();
    if (j.contains("script") && j["script"].is_string())
        r.script = j["script"].get<std::string>().substr(0, k_max_path);
    if (auto wrap = parse_wrap(j, r); !wrap.ok())
        return wrap;
    // The GPU request the decision is bound to: one word, so it cannot add payload fields.
    if (j.contains("gres") && !j["gres"].is_null()) {
        std::string g = j["gres"].is_string() ? j["gres"].get<std::string>() : "";
        bool word = !g.empty() && g.size() <= 63 && std::all_of(g.begin(), g.end(), [](char c) {
            return isalnum((unsigned char)c) || c == ':' || c == '_' || c == '-' || c == '.';
        });
        if (!word)
            return Result<void>::fail(
                "xmem: gres: expected a GPU request of letters, digits, : - _ . (at most 63)");
        r.gres = g;
    }
    if (auto env = parse_env(j, r); !env.ok())
        return env;
    for (auto [key, out] :
         {std::pair{"preamble", &r.preamble}, std::pair{"preamble_skipped", &r.skipped}})
        if (auto lines = parse_lines(j, key, *out); !lines.ok())
            return lines;
    for (auto [key, out] : {std::pair{"gpu", &r.gpu}, std::pair{"partition", &r.partition},
                            std::pair{"torch", &r.torch}})
        if (auto named = opt_name(j, key, *out); !named.ok())
            return named;
    // "iterations" is the field's name before "steps", still sent by older clients.
    const char *steps = j.contains("steps") ? "steps" : "iterations";
    if (j.contains(steps)) {
        if (!j[steps].is_number_integer() || j[steps].get<int64_t>() < 0 ||
            j[steps].get<int64_t>() > k_max_steps)
            return Result<void>::fail(std::string("xmem: ") + steps +
                                      ": expected an integer from 0 (site default) to " +
                                      std::to_string(k_max_steps));
        r.steps = j[steps].get<int>();
    }
    if (j.contains("check_only"))
        r.check_only = j["check_only"].is_boolean() && j["check_only"].get<bool>();
    if (j.contains("async"))
        r.async_ok = j["async"].is_boolean() && j["async"].get<bool>();
    if (j.contains("deadline_ms")) {
        if (!j["deadline_ms"].is_number_integer() || j["deadline_ms"].get<int64_t>() <= 0)
            return Result<void>::fail("xmem: deadline_ms: expected a positive integer");
        r.deadline_ms = (int)std::min<int64_t>(j["deadline_ms"].get<int64_t>(), INT32_MAX);
    }
    return Result<void>::success();
}

} // namespace

Result<EstimateRequest> estimate_parse(const nlohmann::json &j)
{
    EstimateRequest r;
    if (auto parsed = parse_into(j, r); !parsed.ok())
        return Result<EstimateRequest>::fail(parsed.error());
    return Result<EstimateRequest>::ok(std::move(r));
}

} // namespace xmem::server
