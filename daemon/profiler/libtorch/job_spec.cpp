#include "job_spec.h"

#include <fstream>
#include <limits>
#include <set>
#include <sstream>

#include <yaml-cpp/yaml.h>

namespace xmem::libtorch
{

namespace
{

// Invalid input is reported as this exception inside the parser and returned as a value.
struct SpecError {
    std::string message;
};

constexpr int64_t k_max_batch = 1 << 20;
constexpr int k_max_steps = 1000;

struct Ctx {
    const std::string &name;
    [[noreturn]] void fail(const YAML::Node &node, const std::string &what) const
    {
        int line = node.Mark().line >= 0 ? node.Mark().line + 1 : 0;
        throw SpecError{"xmem: " + name + ":" + std::to_string(line) + ": " + what};
    }
};

void allow_only(const Ctx &c, const YAML::Node &map, const std::string &where,
                const std::set<std::string> &keys)
{
    if (!map.IsMap())
        c.fail(map, where + ": expected a mapping");
    for (const auto &kv : map) {
        std::string key = kv.first.as<std::string>();
        if (!keys.count(key))
            c.fail(kv.first, where + ": unknown key '" + key + "'");
    }
}

template <typename T> T scalar(const Ctx &c, const YAML::Node &node, const std::string &key)
{
    if (!node.IsScalar())
        c.fail(node, key + ": expected a single value");
    try {
        return node.as<T>();
    } catch (const YAML::Exception &) {
        c.fail(node, key + ": invalid value: " + node.Scalar());
    }
}

double positive(const Ctx &c, const YAML::Node &node, const std::string &key, bool allow_zero)
{
    double v = scalar<double>(c, node, key);
    if (!(v > 0 || (allow_zero && v == 0)))
        c.fail(node, key + ": invalid value: " + node.Scalar() +
                         (allow_zero ? " (expected >= 0)" : " (expected > 0)"));
    return v;
}

DType parse_dtype(const Ctx &c, const YAML::Node &node)
{
    static const std::pair<const char *, DType> names[] = {
        {"float32", DType::float32}, {"float", DType::float32}, {"float64", DType::float64},
        {"float16", DType::float16}, {"half", DType::float16},  {"bfloat16", DType::bfloat16},
        {"int64", DType::int64},     {"long", DType::int64},    {"int32", DType::int32}};
    std::string s = scalar<std::string>(c, node, "dtype");
    for (const auto &[text, dtype] : names)
        if (s == text)
            return dtype;
    c.fail(node, "dtype: invalid value: " + s +
                     " (expected float32, float64, float16, bfloat16, int64 or int32)");
}

TensorSpec parse_tensor(const Ctx &c, const YAML::Node &node, const std::string &where)
{
    allow_only(c, node, where, {"shape", "dtype", "classes"});
    TensorSpec t;
    if (!node["shape"])
        c.fail(node, where + ": shape is required (use [] for a scalar per sample)");
    const YAML::Node &shape = node["shape"];
    if (!shape.IsSequence())
        c.fail(shape, where + ".shape: expected a list of sizes");
    for (const auto &d : shape) {
        int64_t v = scalar<int64_t>(c, d, where + ".shape");
        if (v < 1)
            c.fail(d, where + ".shape: sizes must be >= 1");
        t.shape.push_back(v);
    }
    if (node["dtype"])
        t.dtype = parse_dtype(c, node["dtype"]);
    if (node["classes"]) {
        t.classes = scalar<int64_t>(c, node["classes"], where + ".classes");
        if (t.classes < 1)
            c.fail(node["classes"], where + ".classes: expected >= 1");
    }
    bool integer = t.dtype == DType::int64 || t.dtype == DType::int32;
    if (integer && t.classes == 0)
        c.fail(node, where + ": integer tensors need classes (values are drawn from [0, classes))");
    return t;
}

OptimizerSpec parse_optimizer(const Ctx &c, const YAML::Node &node)
{
    allow_only(c, node, "optimizer", {"name", "lr", "momentum", "weight_decay", "betas", "eps"});
    OptimizerSpec o;
    if (!node["name"])
        c.fail(node, "optimizer: name is required (sgd, adam or adamw)");
    std::string name = scalar<std::string>(c, node["name"], "optimizer.name");
    if (name == "sgd")
        o.kind = OptimizerKind::sgd;
    else if (name == "adam")
        o.kind = OptimizerKind::adam, o.lr = 1e-3;
    else if (name == "adamw")
        o.kind = OptimizerKind::adamw, o.lr = 1e-3, o.weight_decay = 1e-2;
    else
        c.fail(node["name"],
               "optimizer.name: invalid value: " + name + " (expected sgd, adam or adamw)");
    if (node["lr"])
        o.lr = positive(c, node["lr"], "optimizer.lr", false);
    if (node["momentum"])
        o.momentum = positive(c, node["momentum"], "optimizer.momentum", true);
    if (node["weight_decay"])
        o.weight_decay = positive(c, node["weight_decay"], "optimizer.weight_decay", true);
    if (node["eps"])
        o.eps = positive(c, node["eps"], "optimizer.eps", false);
    if (node["betas"]) {
        const YAML::Node &b = node["betas"];
        if (!b.IsSequence() || b.size() != 2)
            c.fail(b, "optimizer.betas: expected [beta1, beta2]");
        o.beta1 = scalar<double>(c, b[0], "optimizer.betas");
        o.beta2 = scalar<double>(c, b[1], "optimizer.betas");
        if (o.beta1 < 0 || o.beta1 >= 1 || o.beta2 < 0 || o.beta2 >= 1)
            c.fail(b, "optimizer.betas: each must be in [0, 1)");
    }
    if (node["momentum"] && o.kind != OptimizerKind::sgd)
        c.fail(node["momentum"], "optimizer.momentum: only sgd takes momentum");
    if (node["betas"] && o.kind == OptimizerKind::sgd)
        c.fail(node["betas"], "optimizer.betas: sgd takes no betas");
    return o;
}

void parse_root(const Ctx &c, const YAML::Node &root, const std::string &base_dir, JobSpec *spec)
{
    allow_only(
        c, root, "job",
        {"module", "batch_size", "steps", "iterations", "inputs", "target", "loss", "optimizer"});
    for (const char *key : {"module", "batch_size", "inputs", "target", "loss", "optimizer"})
        if (!root[key])
            c.fail(root, std::string(key) + " is required");
    std::string module = scalar<std::string>(c, root["module"], "module");
    spec->module_path = module[0] == '/' || base_dir.empty() ? module : base_dir + "/" + module;
    spec->batch_size = scalar<int64_t>(c, root["batch_size"], "batch_size");
    if (spec->batch_size < 1 || spec->batch_size > k_max_batch)
        c.fail(root["batch_size"], "batch_size: invalid value: " + root["batch_size"].Scalar() +
                                       " (expected 1 to 1048576)");
    // "iterations" is the key's first spelling; the project says "steps" everywhere now.
    for (const char *key : {"steps", "iterations"})
        if (root[key]) {
            spec->steps = scalar<int>(c, root[key], key);
            if (spec->steps < 1 || spec->steps > k_max_steps)
                c.fail(root[key], std::string(key) + ": invalid value (expected 1 to 1000)");
        }
    const YAML::Node &inputs = root["inputs"];
    if (!inputs.IsSequence() || inputs.size() == 0)
        c.fail(inputs, "inputs: expected a list of tensors");
    for (size_t i = 0; i < inputs.size(); ++i)
        spec->inputs.push_back(parse_tensor(c, inputs[i], "inputs[" + std::to_string(i) + "]"));
    spec->target = parse_tensor(c, root["target"], "target");
    std::string loss = scalar<std::string>(c, root["loss"], "loss");
    if (loss == "cross_entropy")
        spec->loss = Loss::cross_entropy;
    else if (loss == "mse")
        spec->loss = Loss::mse;
    else
        c.fail(root["loss"], "loss: invalid value: " + loss + " (expected cross_entropy or mse)");
    spec->optimizer = parse_optimizer(c, root["optimizer"]);
}

} // namespace

// The parser throws SpecError from deep inside the YAML walk; this is its only boundary, and
// what leaves it is a value, as everywhere on xmem's expected-failure paths.
Result<JobSpec> parse_job_spec(const std::string &text, const std::string &name,
                               const std::string &base_dir)
{
    Ctx c{name};
    JobSpec spec;
    try {
        YAML::Node root = YAML::Load(text);
        if (!root.IsDefined() || root.IsNull())
            return Result<JobSpec>::fail("xmem: " + name +
                                         ": empty job spec (see docs/capture.md for the keys)");
        parse_root(c, root, base_dir, &spec);
    } catch (const SpecError &e) {
        return Result<JobSpec>::fail(e.message);
    } catch (const YAML::Exception &e) {
        return Result<JobSpec>::fail("xmem: " + name + ":" + std::to_string(e.mark.line + 1) +
                                     ": " + e.msg);
    }
    return Result<JobSpec>::ok(std::move(spec));
}

Result<JobSpec> load_job_spec(const std::string &path)
{
    std::ifstream in(path);
    if (!in)
        return Result<JobSpec>::fail("xmem: " + path +
                                     ": cannot read the job spec (does it exist?)");
    std::stringstream text;
    text << in.rdbuf();
    size_t slash = path.rfind('/');
    std::string base = slash == std::string::npos ? std::string() : path.substr(0, slash);
    return parse_job_spec(text.str(), path, base);
}

} // namespace xmem::libtorch
