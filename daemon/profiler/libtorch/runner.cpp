#include "runner.h"

#include <torch/script.h>
#include <torch/torch.h>
#include <torch/version.h>

#include <sched.h>

#include <vector>

#include "capture_api.h"

namespace xmem::libtorch
{

namespace
{

// Device tags of the capture library (capture_api.h): host, and "the job named the device".
constexpr int k_host = 'h';
constexpr int k_device = 'G';
constexpr int k_inherit = 'g';

at::ScalarType scalar_type(DType d)
{
    switch (d) {
    case DType::float32:
        return at::kFloat;
    case DType::float64:
        return at::kDouble;
    case DType::float16:
        return at::kHalf;
    case DType::bfloat16:
        return at::kBFloat16;
    case DType::int64:
        return at::kLong;
    case DType::int32:
        return at::kInt;
    }
    return at::kFloat;
}

// One batch as a DataLoader would produce it: on the host.
at::Tensor host_batch(const TensorSpec &t, int64_t batch)
{
    std::vector<int64_t> shape{batch};
    shape.insert(shape.end(), t.shape.begin(), t.shape.end());
    if (t.classes > 0)
        return torch::randint(0, t.classes, shape, torch::dtype(scalar_type(t.dtype)));
    return torch::randn(shape, torch::dtype(scalar_type(t.dtype)));
}

// .to('cuda') of a host tensor: a fresh device storage (the copy a GPU run makes).
at::Tensor to_device(const at::Tensor &host)
{
    int previous = xmem_capture_set_dev(k_device);
    at::Tensor copy = host.clone();
    xmem_capture_set_dev(previous);
    return copy;
}

// module.to(cuda): loaded on the host, every parameter and buffer gets a device copy.
void move_module(torch::jit::Module &module)
{
    torch::NoGradGuard no_grad;
    for (at::Tensor p : module.parameters())
        p.set_data(to_device(p));
    for (at::Tensor b : module.buffers())
        b.set_data(to_device(b));
}

std::unique_ptr<torch::optim::Optimizer> make_optimizer(const OptimizerSpec &o,
                                                        std::vector<at::Tensor> params)
{
    switch (o.kind) {
    case OptimizerKind::sgd:
        return std::make_unique<torch::optim::SGD>(
            params,
            torch::optim::SGDOptions(o.lr).momentum(o.momentum).weight_decay(o.weight_decay));
    case OptimizerKind::adam:
        return std::make_unique<torch::optim::Adam>(params, torch::optim::AdamOptions(o.lr)
                                                                .betas({o.beta1, o.beta2})
                                                                .eps(o.eps)
                                                                .weight_decay(o.weight_decay));
    case OptimizerKind::adamw:
        return std::make_unique<torch::optim::AdamW>(params, torch::optim::AdamWOptions(o.lr)
                                                                 .betas({o.beta1, o.beta2})
                                                                 .eps(o.eps)
                                                                 .weight_decay(o.weight_decay));
    }
    return nullptr;
}

at::Tensor compute_loss(Loss loss, const at::Tensor &output, const at::Tensor &target)
{
    if (loss == Loss::cross_entropy)
        return torch::nn::functional::cross_entropy(output, target);
    return torch::nn::functional::mse_loss(output, target.to(output.scalar_type()));
}

void write_metadata(const JobSpec &spec, const RunOptions &options, int steps)
{
    xmem_capture_meta("torch", TORCH_VERSION);
    xmem_capture_meta("capture", "exact");
    xmem_capture_meta("threads", std::to_string(at::get_num_threads()).c_str());
    xmem_capture_meta("argv", options.command.c_str());
    xmem_capture_meta("steps", std::to_string(steps).c_str());
    xmem_capture_meta("amp", "off");
    // The C++ Optimizer::zero_grad() zeroes in 1.x and sets to none from 2.0 on.
    xmem_capture_meta("zero_grad_set_to_none", TORCH_VERSION_MAJOR >= 2 ? "1" : "0");
    xmem_capture_meta("runner", "libtorch");
    xmem_capture_meta("module", spec.module_path.c_str());
}

void train_step(const JobSpec &spec, torch::jit::Module &module, torch::optim::Optimizer &optimizer)
{
    xmem_capture_phase("data");
    std::vector<torch::jit::IValue> inputs;
    for (const auto &t : spec.inputs)
        inputs.emplace_back(to_device(host_batch(t, spec.batch_size)));
    at::Tensor target = to_device(host_batch(spec.target, spec.batch_size));

    xmem_capture_phase("zero_grad");
    optimizer.zero_grad();
    xmem_capture_phase("forward");
    at::Tensor output = module.forward(inputs).toTensor();
    at::Tensor loss = compute_loss(spec.loss, output, target);
    output = at::Tensor(); // the autograd graph keeps what backward needs
    xmem_capture_phase("backward");
    loss.backward();
    xmem_capture_phase("optimizer");
    optimizer.step();
}

// Same rule as xmem-profile (docs/capture.md, "Threads"): every CPU this process may use.
int available_cpus()
{
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        return CPU_COUNT(&set);
    return 1;
}

// TorchScript errors carry the script's call stack first; the cause is the last line.
std::string last_line(const std::string &text)
{
    size_t end = text.find_last_not_of(" \n");
    if (end == std::string::npos)
        return text;
    size_t start = text.rfind('\n', end);
    return text.substr(start == std::string::npos ? 0 : start + 1,
                       end + 1 - (start == std::string::npos ? 0 : start + 1));
}

} // namespace

Result<void> run_job(const JobSpec &spec, const RunOptions &options)
{
    int steps = options.steps > 0 ? options.steps : spec.steps;
    at::set_num_threads(options.threads > 0 ? options.threads : available_cpus());
    if (xmem_capture_start(options.out.c_str()) != 0)
        return Result<void>::fail(xmem_capture_error());
    try {
        xmem_capture_phase("setup");
        xmem_capture_set_dev(k_host);
        torch::jit::Module module = torch::jit::load(spec.module_path);
        xmem_capture_set_dev(k_inherit);
        move_module(module);
        module.train();
        std::vector<at::Tensor> params;
        for (const at::Tensor &p : module.parameters())
            params.push_back(p);
        auto optimizer = make_optimizer(spec.optimizer, params);
        xmem_capture_set_module(xmem_capture_intern(
            module.type()->name() ? module.type()->name()->name().c_str() : "module"));
        for (int step = 1; step <= steps; ++step) {
            xmem_capture_iteration(static_cast<uint64_t>(step));
            train_step(spec, module, *optimizer);
        }
        write_metadata(spec, options, steps);
        // Finish while the module and optimizer are alive: their teardown is no training step.
        if (xmem_capture_finish() != 0)
            return Result<void>::fail(xmem_capture_error());
    } catch (const c10::Error &e) {
        xmem_capture_abandon();
        return Result<void>::fail("xmem: " + spec.module_path + ": " +
                                  last_line(e.what_without_backtrace()) +
                                  " (do the job spec's inputs and target match the module?)");
    } catch (const std::exception &e) {
        xmem_capture_abandon();
        return Result<void>::fail("xmem: " + spec.module_path + ": " + last_line(e.what()) +
                                  " (do the job spec's inputs and target match the module?)");
    }
    return Result<void>::success();
}

} // namespace xmem::libtorch
