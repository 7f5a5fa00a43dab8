// A synthetic, training-like allocation trace generated on the fly (nothing is stored, so
// the bench's memory is the allocator's): persistent parameters and optimizer state, then
// per iteration a data batch on a side stream (record_stream'd onto the default stream),
// forward activations kept until backward frees them in reverse, short-lived temporaries,
// per-layer gradient buffers, and optimizer temporaries. Sizes mix small-pool, 1–10 MiB
// and large tensors, drawn once per layer from a seeded generator.
#pragma once

#include <cstdint>
#include <vector>

#include "allocator/allocator.h"

namespace xmem::bench
{

struct TraceShape {
    int layers = 48;
    int activations_per_layer = 4;
    uint64_t seed = 1;
};

struct ReplayCounts {
    uint64_t events = 0; // malloc + free + record_stream calls
    uint64_t mallocs = 0;
    uint64_t frees = 0;
    uint64_t ooms = 0;
    uint64_t iterations = 0;
};

class TrainingTrace
{
  public:
    explicit TrainingTrace(const TraceShape &shape);
    // Replays whole iterations until at least `events` events were issued; frees everything
    // at the end so the run finishes with allocated_bytes = 0.
    ReplayCounts replay(sim::DeviceCachingAllocator &alloc, uint64_t events) const;

  private:
    struct Layer {
        std::vector<uint64_t> activations;
        uint64_t temporary;
        uint64_t gradient;
        uint64_t parameter;
    };
    std::vector<Layer> m_layers;
    uint64_t m_batch_bytes;
};

} // namespace xmem::bench
