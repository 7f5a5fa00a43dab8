#include "training_trace.h"

#include <random>

namespace xmem::bench
{

namespace
{

constexpr uint64_t KiB = 1024;
constexpr uint64_t MiB = 1024 * KiB;
constexpr sim::StreamId kDefaultStream = 0;
constexpr sim::StreamId kCopyStream = 1;
constexpr sim::StreamId kOptimizerStream = 2;

// 55 % small-pool tensors, 35 % 1–10 MiB, 10 % large: the mix of a transformer block.
uint64_t draw_size(std::mt19937_64 &rng)
{
    const unsigned kind = static_cast<unsigned>(rng() % 100);
    if (kind < 55)
        return 64 + rng() % (900 * KiB);
    if (kind < 90)
        return MiB + rng() % (9 * MiB);
    return 10 * MiB + rng() % (54 * MiB);
}

struct Replayer {
    sim::DeviceCachingAllocator &alloc;
    ReplayCounts counts;

    uint64_t malloc(uint64_t size, sim::StreamId stream)
    {
        ++counts.events;
        ++counts.mallocs;
        const sim::MallocResult r = alloc.malloc(size, stream);
        if (!r.ok)
            ++counts.ooms;
        return r.ptr;
    }
    void free(uint64_t ptr)
    {
        ++counts.events;
        ++counts.frees;
        (void)alloc.free(ptr); // ptr 0 (after an OOM) is a no-op
    }
    void record_stream(uint64_t ptr, sim::StreamId stream)
    {
        ++counts.events;
        if (ptr != 0)
            (void)alloc.record_stream(ptr, stream);
    }
};

} // namespace

TrainingTrace::TrainingTrace(const TraceShape &shape)
{
    std::mt19937_64 rng(shape.seed);
    m_layers.resize(static_cast<size_t>(shape.layers));
    for (Layer &layer : m_layers) {
        for (int j = 0; j < shape.activations_per_layer; ++j)
            layer.activations.push_back(draw_size(rng));
        layer.temporary = draw_size(rng);
        layer.gradient = draw_size(rng);
        layer.parameter = draw_size(rng) / 2 + 512;
    }
    m_batch_bytes = 8 * MiB + 12345;
}

ReplayCounts TrainingTrace::replay(sim::DeviceCachingAllocator &alloc, uint64_t events) const
{
    Replayer r{alloc, {}};
    std::vector<uint64_t> persistent;
    for (const Layer &layer : m_layers) {
        persistent.push_back(r.malloc(layer.parameter, kDefaultStream));     // weights
        persistent.push_back(r.malloc(layer.parameter, kDefaultStream));     // grad buffer
        persistent.push_back(r.malloc(2 * layer.parameter, kDefaultStream)); // Adam state
    }
    std::vector<uint64_t> saved; // activations saved for backward, freed in reverse
    saved.reserve(m_layers.size() * 8);
    while (r.counts.events < events) {
        // Data: copied in on a side stream, consumed on the default stream.
        const uint64_t batch = r.malloc(m_batch_bytes, kCopyStream);
        r.record_stream(batch, kDefaultStream);
        // Forward.
        for (const Layer &layer : m_layers) {
            for (uint64_t bytes : layer.activations)
                saved.push_back(r.malloc(bytes, kDefaultStream));
            r.free(r.malloc(layer.temporary, kDefaultStream));
        }
        r.free(batch);
        // Backward, in reverse: a gradient buffer and a temporary per layer.
        for (size_t i = m_layers.size(); i-- > 0;) {
            const Layer &layer = m_layers[i];
            const uint64_t grad = r.malloc(layer.gradient, kDefaultStream);
            const uint64_t tmp = r.malloc(layer.temporary / 2 + 512, kDefaultStream);
            for (size_t j = 0; j < layer.activations.size(); ++j) {
                r.free(saved.back());
                saved.pop_back();
            }
            r.free(tmp);
            r.free(grad);
        }
        // Optimizer: fused temporaries on their own stream.
        for (const Layer &layer : m_layers)
            r.free(r.malloc(layer.parameter, kOptimizerStream));
        ++r.counts.iterations;
    }
    for (uint64_t p : persistent)
        r.free(p);
    return r.counts;
}

} // namespace xmem::bench
