// Trains a TorchScript module for a few optimizer steps on the CPU under capture, the way a
// C++ training loop on a GPU would: load, move to the device, batch -> device, zero_grad,
// forward, loss, backward, step.
#pragma once

#include <string>

#include "job_spec.h"

namespace xmem::libtorch
{

struct RunOptions {
    std::string out;     // trace path
    int steps = 0;       // 0: the spec's steps
    int threads = 0;     // 0: torch's default
    std::string command; // for the argv metadata
};

// Fails with one "xmem: ..." line; no trace is left behind then.
Result<void> run_job(const JobSpec &spec, const RunOptions &options);

} // namespace xmem::libtorch
