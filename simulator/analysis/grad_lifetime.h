// Pass 2: gradient lifetimes under the target release's zero_grad semantics.
//
// torch 1.13's optimizer.zero_grad() defaults to set_to_none=False: gradients are allocated
// in the first backward and live for ever, and each later backward allocates an incoming
// gradient buffer, adds it in place (`grad += buf`) and frees it. torch 2.x defaults to
// set_to_none=True: zero_grad frees the gradients and the next backward's incoming buffers
// are stolen by AccumulateGrad and become the new gradients, alive until the next zero_grad.
//
// When the capture ran 1.13 semantics (metadata zero_grad_set_to_none=0, or a 1.x capture
// without it) and the target is 2.x, this pass rewrites the trace to 2.x semantics:
//  - the gradients of iteration 1 are the backward storages still alive when iteration 2
//    starts (or at the end of a one-iteration trace);
//  - in each later backward, the buffer matching each gradient (same bytes, same order,
//    freed within the backward) is kept alive instead (under a fresh id) and becomes the
//    gradient;
//  - at every `zero_grad` phase mark the current gradients are freed.
// Limitation: an explicit zero_grad(set_to_none=False) in a 1.13 capture looks the same as
// the default and is rewritten too (documented in docs/estimate.md).
#pragma once

#include "allocator/version.h"
#include "analysis/workload.h"

#include <cstdint>
#include <string>
#include <vector>

namespace xmem::analysis
{

struct GradStats {
    bool applied = false;
    std::string reason;     // why applied or not, one line for the report
    uint64_t gradients = 0; // gradient storages per iteration
    uint64_t gradient_bytes = 0;
    uint64_t promoted = 0; // later-iteration buffers turned into gradients
};

GradStats apply_target_zero_grad(Workload &work, sim::TorchVersion target);

// Alloc indexes, in allocation order, of the device storages made in the backward of
// `iteration` and still alive when that backward ends: the gradients (one per parameter
// that received one; also used for the parameter sizes by the optimizer pass).
std::vector<size_t> backward_survivors(const Workload &work, uint32_t iteration);

} // namespace xmem::analysis
