// The YAML job spec of xmem-profile-libtorch: a TorchScript module plus what a C++ training
// loop around it needs. Example (docs/capture.md, "LibTorch jobs"):
//
//   module: model.pt            # torch.jit.script(model).save(...); relative to this file
//   batch_size: 8
//   steps: 3                    # optimizer steps to capture (--steps overrides; the
//                               # older spelling "iterations" is accepted)
//   inputs:
//     - {shape: [3, 32, 32], dtype: float32}   # one sample; the batch dimension is added
//   target: {shape: [], dtype: int64, classes: 10}
//   loss: cross_entropy         # cross_entropy | mse
//   optimizer: {name: adam, lr: 0.001, weight_decay: 0.0, betas: [0.9, 0.999]}
#pragma once

#include "common/result.h"
#include "contract/defaults.h"

#include <cstdint>
#include <string>
#include <vector>

namespace xmem::libtorch
{

enum class DType { float32, float64, float16, bfloat16, int64, int32 };
enum class Loss { cross_entropy, mse };
enum class OptimizerKind { sgd, adam, adamw };

struct TensorSpec {
    std::vector<int64_t> shape; // one sample, without the batch dimension
    DType dtype = DType::float32;
    int64_t classes = 0; // integer tensors: values drawn from [0, classes)
};

struct OptimizerSpec {
    OptimizerKind kind = OptimizerKind::sgd;
    double lr = 0.01;
    double momentum = 0.0;
    double weight_decay = 0.0;
    double beta1 = 0.9;
    double beta2 = 0.999;
    double eps = 1e-8;
};

struct JobSpec {
    std::string module_path; // absolute, or relative to the working directory
    int64_t batch_size = 1;
    int steps = XMEM_DEFAULT_STEPS;
    std::vector<TensorSpec> inputs;
    TensorSpec target;
    Loss loss = Loss::cross_entropy;
    OptimizerSpec optimizer;
};

// Parses YAML TEXT; NAME is used in messages ("xmem: NAME:LINE: ...") and BASE_DIR resolves
// a relative module path. Fails with one "xmem: NAME:LINE: ..." line on any invalid or
// unknown key.
Result<JobSpec> parse_job_spec(const std::string &text, const std::string &name,
                               const std::string &base_dir);
Result<JobSpec> load_job_spec(const std::string &path);

} // namespace xmem::libtorch
