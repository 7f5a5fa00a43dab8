#include "analysis/catalog.h"

#include "analysis/paths.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <set>

namespace xmem::analysis
{

namespace
{

constexpr uint64_t k_mib = 1048576;
constexpr uint64_t k_kib = 1024;

// Keys of one GPU entry. Numbers must each have a `sources` entry.
const std::set<std::string> k_number_keys = {
    "total_memory_mib",     "compute_capability",     "context_mib",
    "cublas_workspace_kib", "cublaslt_workspace_kib", "cudnn_context_mib"};
// Numbers an entry may leave out (older catalogs, a site's own): the rules that need them then
// add nothing. Given, they need a source like the others.
const std::set<std::string> k_optional_number_keys = {"multiprocessors"};
const std::set<std::string> k_other_keys = {"name", "aliases", "sources"};

bool is_number_key(const std::string &key)
{
    return k_number_keys.count(key) || k_optional_number_keys.count(key);
}

struct Where {
    const std::string &file;
    std::string at(const YAML::Node &node, const std::string &key) const
    {
        return "xmem: " + file + ":" + std::to_string(node.Mark().line + 1) + ": " + key + ": ";
    }
};

std::string lower(std::string s)
{
    std::transform(s.begin(), s.end(), s.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return s;
}

Result<uint64_t> positive_number(const Where &w, const YAML::Node &node, const std::string &key)
{
    const std::string &text = node.Scalar();
    if (!node.IsScalar() || text.empty() ||
        !std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isdigit(c); }))
        return Result<uint64_t>::fail(w.at(node, key) + "expected a positive whole number, got '" +
                                      text + "'");
    uint64_t value = std::strtoull(text.c_str(), nullptr, 10);
    if (value == 0 || value > (uint64_t{1} << 40))
        return Result<uint64_t>::fail(w.at(node, key) + "out of range: " + text);
    return Result<uint64_t>::ok(value);
}

Result<void> parse_capability(const Where &w, const YAML::Node &node, GpuSpec &gpu)
{
    const std::string &text = node.Scalar();
    size_t dot = text.find('.');
    bool ok = node.IsScalar() && dot != std::string::npos && dot > 0 && dot + 1 < text.size() &&
              std::all_of(text.begin(), text.end(),
                          [](unsigned char c) { return std::isdigit(c) || c == '.'; }) &&
              text.find('.', dot + 1) == std::string::npos;
    if (!ok)
        return Result<void>::fail(w.at(node, "compute_capability") +
                                  "expected MAJOR.MINOR such as \"8.0\", got '" + text + "'");
    gpu.cc_major = std::atoi(text.substr(0, dot).c_str());
    gpu.cc_minor = std::atoi(text.substr(dot + 1).c_str());
    return Result<void>::success();
}

Result<void> parse_sources(const Where &w, const YAML::Node &node, GpuSpec &gpu)
{
    if (!node.IsMap())
        return Result<void>::fail(w.at(node, "sources") + "expected a map of key: source");
    for (const auto &kv : node) {
        std::string key = kv.first.Scalar();
        if (!is_number_key(key))
            return Result<void>::fail(w.at(kv.first, "sources") + "'" + key +
                                      "' is not a numeric key of a GPU entry");
        if (!kv.second.IsScalar() || kv.second.Scalar().size() < 8)
            return Result<void>::fail(w.at(kv.second, "sources." + key) +
                                      "give a real source (a document, PR or measurement)");
        gpu.sources[key] = kv.second.Scalar();
    }
    return Result<void>::success();
}

Result<void> parse_field(const Where &w, const std::string &key, const YAML::Node &value,
                         GpuSpec &gpu)
{
    if (key == "name") {
        if (!value.IsScalar() || value.Scalar().empty())
            return Result<void>::fail(w.at(value, key) + "expected a non-empty name");
        gpu.name = value.Scalar();
    } else if (key == "aliases") {
        if (!value.IsSequence())
            return Result<void>::fail(w.at(value, key) + "expected a list of names");
        for (const auto &a : value)
            gpu.aliases.push_back(a.Scalar());
    } else if (key == "sources") {
        return parse_sources(w, value, gpu);
    } else if (key == "compute_capability") {
        return parse_capability(w, value, gpu);
    } else {
        auto n = positive_number(w, value, key);
        if (!n.ok())
            return Result<void>::fail(n.error());
        if (key == "total_memory_mib")
            gpu.total_bytes = n.value() * k_mib;
        else if (key == "context_mib")
            gpu.context_bytes = n.value() * k_mib;
        else if (key == "cublas_workspace_kib")
            gpu.cublas_workspace_bytes = n.value() * k_kib;
        else if (key == "cublaslt_workspace_kib")
            gpu.cublaslt_workspace_bytes = n.value() * k_kib;
        else if (key == "cudnn_context_mib")
            gpu.cudnn_context_bytes = n.value() * k_mib;
        else if (key == "multiprocessors")
            gpu.multiprocessors = static_cast<int>(std::min<uint64_t>(n.value(), 1u << 20));
    }
    return Result<void>::success();
}

Result<GpuSpec> parse_gpu(const Where &w, const YAML::Node &entry)
{
    if (!entry.IsMap())
        return Result<GpuSpec>::fail(w.at(entry, "gpus") + "each entry must be a map");
    GpuSpec gpu;
    std::set<std::string> seen;
    for (const auto &kv : entry) {
        std::string key = kv.first.Scalar();
        if (!is_number_key(key) && !k_other_keys.count(key))
            return Result<GpuSpec>::fail(w.at(kv.first, key) +
                                         "unknown key (known: name, aliases, "
                                         "total_memory_mib, compute_capability, context_mib, "
                                         "cublas_workspace_kib, cublaslt_workspace_kib, "
                                         "cudnn_context_mib, multiprocessors, sources)");
        seen.insert(key);
        auto r = parse_field(w, key, kv.second, gpu);
        if (!r.ok())
            return Result<GpuSpec>::fail(r.error());
    }
    for (const std::string &key : k_number_keys) {
        if (!seen.count(key))
            return Result<GpuSpec>::fail(w.at(entry, key) + "missing in GPU entry '" + gpu.name +
                                         "'");
        if (!gpu.sources.count(key))
            return Result<GpuSpec>::fail(w.at(entry, key) +
                                         "no source given under 'sources' for '" + gpu.name + "'");
    }
    for (const std::string &key : k_optional_number_keys)
        if (seen.count(key) && !gpu.sources.count(key))
            return Result<GpuSpec>::fail(w.at(entry, key) +
                                         "no source given under 'sources' for '" + gpu.name + "'");
    if (!seen.count("name"))
        return Result<GpuSpec>::fail(w.at(entry, "name") + "missing in a GPU entry");
    return Result<GpuSpec>::ok(std::move(gpu));
}

bool parse_release(const std::string &text, int &major, int &minor)
{
    size_t dot = text.find('.');
    if (dot == 0 || dot == std::string::npos || dot + 1 >= text.size())
        return false;
    char *end = nullptr;
    major = static_cast<int>(std::strtol(text.c_str(), &end, 10));
    if (end != text.c_str() + dot)
        return false;
    minor = static_cast<int>(std::strtol(text.c_str() + dot + 1, &end, 10));
    return end != text.c_str() + dot + 1 && (*end == '\0' || *end == '.');
}

// `nccl:` a list of {version: "MAJOR.MINOR", buffers_mib: N, source: TEXT}; optional.
Result<std::vector<NcclTerm>> parse_nccl(const Where &w, const YAML::Node &list)
{
    using R = Result<std::vector<NcclTerm>>;
    std::vector<NcclTerm> terms;
    if (!list)
        return R::ok(std::move(terms));
    if (!list.IsSequence())
        return R::fail(w.at(list, "nccl") + "expected a list of {version, buffers_mib, source}");
    for (const auto &entry : list) {
        NcclTerm t;
        if (!entry.IsMap() || entry.size() != 3 || !entry["version"] || !entry["buffers_mib"] ||
            !entry["source"])
            return R::fail(w.at(entry, "nccl") + "each entry has exactly version, buffers_mib "
                                                 "and source");
        if (!parse_release(entry["version"].Scalar(), t.major, t.minor))
            return R::fail(w.at(entry["version"], "nccl.version") +
                           "expected MAJOR.MINOR such as \"2.19\", got '" +
                           entry["version"].Scalar() + "'");
        auto mib = positive_number(w, entry["buffers_mib"], "nccl.buffers_mib");
        if (!mib.ok())
            return R::fail(mib.error());
        t.bytes = mib.value() * k_mib;
        t.source = entry["source"].Scalar();
        terms.push_back(std::move(t));
    }
    std::sort(terms.begin(), terms.end(), [](const NcclTerm &a, const NcclTerm &b) {
        return a.major != b.major ? a.major > b.major : a.minor > b.minor;
    });
    return R::ok(std::move(terms));
}

Result<Catalog> parse_root(const YAML::Node &root, const std::string &name)
{
    Where w{name};
    if (!root.IsMap() || !root["gpus"])
        return Result<Catalog>::fail(w.at(root, "gpus") + "missing: the catalog is a map with a "
                                                          "'gpus' list");
    for (const auto &kv : root)
        if (kv.first.Scalar() != "gpus" && kv.first.Scalar() != "version" &&
            kv.first.Scalar() != "nccl")
            return Result<Catalog>::fail(w.at(kv.first, kv.first.Scalar()) +
                                         "unknown top-level key (known: version, gpus, nccl)");
    auto nccl = parse_nccl(w, root["nccl"]);
    if (!nccl.ok())
        return Result<Catalog>::fail(nccl.error());
    const YAML::Node &list = root["gpus"];
    if (!list.IsSequence() || list.size() == 0)
        return Result<Catalog>::fail(w.at(list, "gpus") + "expected a non-empty list");
    std::vector<GpuSpec> gpus;
    std::set<std::string> names;
    for (const auto &entry : list) {
        auto gpu = parse_gpu(w, entry);
        if (!gpu.ok())
            return Result<Catalog>::fail(gpu.error());
        std::vector<std::string> all = gpu.value().aliases;
        all.push_back(gpu.value().name);
        for (const std::string &n : all)
            if (!names.insert(lower(n)).second)
                return Result<Catalog>::fail(w.at(entry, "name") + "'" + n + "' is listed twice");
        gpus.push_back(std::move(gpu.value()));
    }
    return Result<Catalog>::ok(Catalog::from(std::move(gpus), name, std::move(nccl.value())));
}

} // namespace

Catalog Catalog::from(std::vector<GpuSpec> gpus, std::string path, std::vector<NcclTerm> nccl)
{
    Catalog c;
    c.m_gpus = std::move(gpus);
    c.m_path = std::move(path);
    c.m_nccl = std::move(nccl);
    return c;
}

NcclTerm Catalog::nccl_for(const std::string &version) const
{
    int major = 0, minor = 0;
    bool known = parse_release(version, major, minor);
    for (const NcclTerm &t : m_nccl) // newest first
        if (known && (t.major < major || (t.major == major && t.minor <= minor)))
            return t;
    return m_nccl.empty() ? NcclTerm{} : m_nccl.front();
}

Result<Catalog> Catalog::parse(const std::string &text, const std::string &name)
{
    try {
        return parse_root(YAML::Load(text), name);
    } catch (const YAML::ParserException &e) {
        return Result<Catalog>::fail("xmem: " + name + ":" + std::to_string(e.mark.line + 1) +
                                     ": not valid YAML: " + e.msg);
    }
}

Result<Catalog> Catalog::load(const std::string &path)
{
    std::string text;
    auto read = read_small_file(path, text);
    if (!read.ok())
        return Result<Catalog>::fail(read.error());
    return parse(text, path);
}

Result<GpuSpec> Catalog::find(const std::string &name) const
{
    std::string want = lower(name);
    std::string known;
    for (const GpuSpec &gpu : m_gpus) {
        if (lower(gpu.name) == want)
            return Result<GpuSpec>::ok(gpu);
        for (const std::string &a : gpu.aliases)
            if (lower(a) == want)
                return Result<GpuSpec>::ok(gpu);
        known += (known.empty() ? "" : ", ") + gpu.name;
    }
    return Result<GpuSpec>::fail("xmem: --gpu " + name + ": not in the catalog " + m_path +
                                 " (known: " + known + "); add an entry or pick one of these");
}

std::vector<std::string> uncalibrated_terms(const GpuSpec &gpu)
{
    std::vector<std::string> keys;
    for (const auto &[key, source] : gpu.sources)
        if (lower(source).find("uncalibrated") != std::string::npos)
            keys.push_back(key);
    return keys;
}

Result<GpuSpec> Catalog::find_unambiguous(const std::string &name) const
{
    std::string want = lower(name);
    std::vector<std::string> candidates;
    for (const GpuSpec &gpu : m_gpus) {
        std::string full = lower(gpu.name);
        if (full == want)
            return Result<GpuSpec>::ok(gpu);
        if (full.rfind(want + "-", 0) == 0)
            candidates.push_back(gpu.name);
    }
    if (candidates.size() < 2)
        return find(name);
    std::string list;
    for (const std::string &c : candidates)
        list += (list.empty() ? "" : ", ") + c;
    return Result<GpuSpec>::fail("xmem: --gpu " + name + ": ambiguous, it could be " + list +
                                 "; give the full name");
}

} // namespace xmem::analysis
