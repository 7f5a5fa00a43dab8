// segments(): the allocator's state as plain values, walked from each segment's head block
// (the heads are found the way check_invariants finds them: free sets and the address map).
#include <algorithm>

#include "allocator/allocator.h"

namespace xmem::sim
{

namespace
{

SegmentView view_of(const Block *head)
{
    SegmentView seg;
    seg.addr = head->ptr;
    seg.stream = head->stream;
    seg.small = head->pool->is_small;
    seg.expandable = head->expandable_segment != nullptr;
    for (const Block *b = head; b != nullptr; b = b->next) {
        seg.blocks.push_back(
            BlockView{b->ptr, b->size, b->requested_size, b->allocated, b->mapped});
        seg.size += b->size;
    }
    return seg;
}

} // namespace

std::vector<SegmentView> DeviceCachingAllocator::segments() const
{
    std::vector<const Block *> heads;
    auto note = [&](const Block *b) {
        if (b->prev == nullptr)
            heads.push_back(b);
    };
    for (const BlockPool *pool : {&m_large_blocks, &m_small_blocks}) {
        for (const FreeKey &k : pool->blocks)
            note(k.block);
        for (const FreeKey &k : pool->unmapped)
            note(k.block);
    }
    m_active_blocks.for_each([&](uint64_t ptr, const Block *b) {
        if (ptr == b->ptr)
            note(b);
    });
    std::sort(heads.begin(), heads.end(),
              [](const Block *a, const Block *b) { return a->ptr < b->ptr; });
    heads.erase(std::unique(heads.begin(), heads.end()), heads.end());
    std::vector<SegmentView> out;
    out.reserve(heads.size());
    for (const Block *head : heads)
        out.push_back(view_of(head));
    return out;
}

} // namespace xmem::sim
