// Pass: optimizer-step temporaries of the target release.
//
// torch 1.13 optimizers loop over parameters (foreach=False by default), so a CPU capture
// holds a parameter's temporaries only while that parameter is updated. torch 2.x picks
// the multi-tensor ("foreach") implementation by default for CUDA parameters: each
// `torch._foreach_*` op that is not in place returns a whole list of parameter-sized
// tensors, alive together until the step ends. Per optimizer (torch 2.x _multi_tensor_adam,
// _multi_tensor_adagrad, ... in torch/optim/; docs/estimate.md):
//   Adam, AdamW, RMSprop  1 list  (_foreach_sqrt of the second moment)
//   Adagrad               2 lists (std and numerator)
//   SGD                   none
//   + 1 list when weight decay is folded into the gradient (_foreach_add(grads, params)),
//     seen in the capture as non-in-place `aten::add` allocations in the step (not AdamW,
//     whose decay is an in-place mul on the parameters).
// When the capture looped (1.x capture, no _foreach_ op in the step) and the target is
// 2.x, the step's parameter-sized temporaries (allocated and freed inside the step,
// > 8 bytes) are replaced by those lists, allocated where the first temporary was and
// freed at the end of the step. Unknown optimizer classes are left as captured.
#pragma once

#include "allocator/version.h"
#include "analysis/workload.h"

#include <cstdint>
#include <string>

namespace xmem::analysis
{

struct ForeachStats {
    bool applied = false;
    std::string optimizer; // class name from Optimizer.step#<Class>.step
    unsigned lists = 0;    // parameter-sized lists per step
    uint64_t list_bytes = 0;
    uint64_t temporaries_replaced = 0;
};

ForeachStats apply_target_foreach(Workload &work, sim::TorchVersion target);

// "Adam" from "...Optimizer.step#Adam.step>aten::add" ("" if none).
std::string optimizer_class(std::string_view ctx);

} // namespace xmem::analysis
