// accounting_record.cpp — the job's accounting record as compact JSON, and back.
#include "accounting_record.h"

#include <nlohmann/json.hpp>

namespace xmem::server
{

namespace
{
template <class T> void put(nlohmann::json &j, const char *key, const std::optional<T> &v)
{
    if (v)
        j[key] = *v;
}

template <class T> void take(const nlohmann::json &j, const char *key, std::optional<T> &v)
{
    if (j.contains(key) && !j[key].is_null())
        v = j[key].get<T>();
}

// A byte count or a count of seconds: a non-negative integer (nlohmann reads those unsigned).
bool unsigned_or_absent(const nlohmann::json &j, const char *key)
{
    return !j.contains(key) || j[key].is_null() || j[key].is_number_unsigned();
}

bool well_formed(const nlohmann::json &j)
{
    for (const char *key : {"ts", "req", "exit", "el", "est", "limit", "peak"})
        if (!unsigned_or_absent(j, key))
            return false;
    for (const char *key : {"gpu", "share", "enf"})
        if (j.contains(key) && !j[key].is_null() && !j[key].is_string())
            return false;
    for (const char *key : {"ok", "check", "oom", "rq"})
        if (!j.contains(key) || !j[key].is_number_unsigned() || j[key].get<unsigned>() > 1)
            return false;
    if (j.contains("frac") &&
        (!j["frac"].is_number() || j["frac"].get<double>() <= 0 || j["frac"].get<double>() > 1))
        return false;
    return j.contains("ts") && j.contains("exit") && j.contains("el");
}

// The JSON object that starts at `from`, up to its closing brace (strings may hold braces).
std::string object_at(const std::string &s, std::size_t from)
{
    int depth = 0;
    bool in_string = false;
    for (std::size_t i = from; i < s.size(); i++) {
        char c = s[i];
        if (in_string) {
            if (c == '\\')
                i++;
            else if (c == '"')
                in_string = false;
        } else if (c == '"') {
            in_string = true;
        } else if (c == '{') {
            depth++;
        } else if (c == '}' && --depth == 0) {
            return s.substr(from, i + 1 - from);
        }
    }
    return "";
}
} // namespace

std::string accounting_record_json(const AccountingRecord &r)
{
    nlohmann::json j;
    j["v"] = k_accounting_record_version;
    j["ts"] = r.ts;
    j["req"] = r.request_id;
    j["gpu"] = r.gpu;
    put(j, "est", r.estimate_bytes);
    put(j, "limit", r.limit_bytes);
    j["ok"] = r.estimated ? 1 : 0;
    j["check"] = r.check_only ? 1 : 0;
    put(j, "share", r.share);
    put(j, "frac", r.gpu_fraction);
    put(j, "peak", r.measured_bytes);
    j["oom"] = r.cuda_oom ? 1 : 0;
    j["rq"] = r.oom_requeued ? 1 : 0;
    j["exit"] = r.exit_status;
    j["el"] = r.elapsed_seconds;
    put(j, "enf", r.enforcement);
    return j.dump(); // compact, and ASCII-safe names only reach it (checked on the way in)
}

std::optional<AccountingRecord> accounting_record_find(const std::string &admin_comment)
{
    std::size_t tag = admin_comment.rfind(k_accounting_record_tag);
    if (tag == std::string::npos)
        return std::nullopt;
    std::size_t from = tag + std::string(k_accounting_record_tag).size();
    auto j = nlohmann::json::parse(object_at(admin_comment, from), nullptr, false);
    if (!j.is_object() || j.value("v", 0) != k_accounting_record_version || !well_formed(j))
        return std::nullopt;
    AccountingRecord r;
    r.ts = j["ts"].get<int64_t>();
    r.request_id = j.value("req", (uint64_t)0);
    r.gpu = j.value("gpu", std::string());
    take(j, "est", r.estimate_bytes);
    take(j, "limit", r.limit_bytes);
    r.estimated = j["ok"].get<unsigned>() == 1;
    r.check_only = j["check"].get<unsigned>() == 1;
    take(j, "share", r.share);
    take(j, "frac", r.gpu_fraction);
    take(j, "peak", r.measured_bytes);
    r.cuda_oom = j["oom"].get<unsigned>() == 1;
    r.oom_requeued = j["rq"].get<unsigned>() == 1;
    r.exit_status = j["exit"].get<int>();
    r.elapsed_seconds = j["el"].get<uint64_t>();
    take(j, "enf", r.enforcement);
    return r;
}

} // namespace xmem::server
