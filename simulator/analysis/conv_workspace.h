// cuDNN convolution workspaces sized from the geometry the capture records (`K` records,
// docs/trace-format.md).
//
// On a GPU each convolution pass — forward, grad_input (backward data), grad_weight
// (backward filter) — asks cuDNN for a workspace sized by the algorithm its heuristics pick,
// and PyTorch allocates it through the caching allocator, after the pass's output, and frees
// it when the kernel is queued (allocator.md 12.6). The algorithms that need large
// workspaces (FFT, FFT tiling, Winograd non-fused) transform input and output tiles into
// buffers of their own, and run only for ungrouped, stride-1, undilated convolutions with a
// kernel larger than 1x1. 1x1, strided, dilated and grouped/depthwise convolutions run as
// implicit GEMMs or dedicated kernels with little or no workspace, and so do convolutions of
// few input channels (a network's first layer on RGB or grey images: transforms do not pay
// there). So xmem sizes a pass's workspace as
//     eligible ? k_conv_workspace_factor x (input bytes + output bytes) : 0
// capped at k_conv_workspace_cap_bytes; docs/estimate.md ("cuDNN workspaces") says how the
// factor was chosen and what it leaves out.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace xmem::analysis
{

// Below this many input channels a convolution gets no large workspace (see above).
constexpr uint64_t k_conv_min_input_channels = 16;

struct ConvGeometry {
    std::string module;
    std::vector<uint64_t> x, w; // input (N, C, spatial...), weight (O, C/g, k...)
    std::vector<uint64_t> stride, dilation;
    std::vector<uint64_t> padding; // empty with pad_same (padding='same')
    bool pad_same = false;
    uint64_t groups = 1;
    uint64_t elem = 4; // element size of the input
    bool transposed = false;

    uint64_t input_numel() const;
    uint64_t weight_numel() const;
    uint64_t output_numel() const;
    uint64_t output_channels() const; // a bias's element count
    // Whether cuDNN may pick a large-workspace algorithm (see above).
    bool large_workspace_eligible() const;
};

// Parses a K record's text ("module conv x=.. w=.. s=.. p=.. d=.. g=.. e=.. t=.."); nullopt
// for another kind or a malformed record (which then gets no workspace).
std::optional<ConvGeometry> parse_conv_record(std::string_view text);

// Workspace bytes of one pass of `g` whose tensors have `elem`-byte elements.
uint64_t conv_workspace_bytes(const ConvGeometry &g, uint64_t elem, double factor,
                              uint64_t cap_bytes);

} // namespace xmem::analysis
