// What each device storage is, from when it was made and how long it lived: the basis of
// the breakdown that explains the peak.
//
//   workspaces       inserted by xmem (cuBLAS, cuBLASLt, cuDNN)
//   weights          made in iteration 0 (set-up) and alive when iteration 1 starts
//   inputs           made in a data phase (the batch on the device)
//   gradients        made in a backward and alive after it ends (freed by zero_grad, a
//                    later iteration, or never)
//   optimizer_state  made in an optimizer step and alive into a later iteration
//   activations      made in a forward or backward and freed within it (saved tensors,
//                    outputs, autograd temporaries, the loss)
//   other            everything else (optimizer temporaries, set-up scratch, ...)
#pragma once

#include "analysis/workload.h"

#include <array>
#include <cstdint>
#include <vector>

namespace xmem::analysis
{

enum class Category : uint8_t {
    weights,
    gradients,
    optimizer_state,
    activations,
    inputs,
    workspaces,
    other,
};
constexpr size_t k_categories = 7;
using CategoryBytes = std::array<uint64_t, k_categories>;

const char *category_name(Category c);

// One entry per event: the category of the storage an alloc makes (other kinds: `other`).
std::vector<Category> categorize(const Workload &work);

} // namespace xmem::analysis
