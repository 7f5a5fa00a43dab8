// NodeArena + ArenaAllocator: a free-list of fixed-size nodes for the pools' ordered sets,
// so inserting and erasing free blocks (every malloc and free) never calls operator new
// once the arena has grown to the peak number of free blocks.
#pragma once

#include <cstddef>
#include <memory>
#include <new>
#include <vector>

namespace xmem::sim
{

class NodeArena
{
  public:
    NodeArena() = default;
    NodeArena(const NodeArena &) = delete;
    NodeArena &operator=(const NodeArena &) = delete;

    void *get(size_t bytes)
    {
        // Every set in one allocator has the same node type; other sizes (never expected)
        // fall back to the heap rather than corrupt the free list.
        if (m_node_size == 0)
            m_node_size = round_up(bytes);
        if (round_up(bytes) != m_node_size)
            return ::operator new(bytes);
        if (m_free == nullptr)
            grow();
        FreeNode *node = m_free;
        m_free = node->next;
        return node;
    }
    void put(void *p, size_t bytes)
    {
        if (round_up(bytes) != m_node_size) {
            ::operator delete(p);
            return;
        }
        auto *node = static_cast<FreeNode *>(p);
        node->next = m_free;
        m_free = node;
    }

  private:
    struct FreeNode {
        FreeNode *next;
    };
    static constexpr size_t kNodesPerChunk = 1024;
    static size_t round_up(size_t bytes)
    {
        const size_t a = alignof(std::max_align_t);
        return (bytes + a - 1) / a * a;
    }
    void grow()
    {
        const size_t bytes = m_node_size * kNodesPerChunk;
        m_chunks.emplace_back(new std::max_align_t[(bytes + sizeof(std::max_align_t) - 1) /
                                                   sizeof(std::max_align_t)]);
        char *base = reinterpret_cast<char *>(m_chunks.back().get());
        for (size_t i = kNodesPerChunk; i-- > 0;)
            put(base + i * m_node_size, m_node_size);
    }

    size_t m_node_size = 0;
    FreeNode *m_free = nullptr;
    std::vector<std::unique_ptr<std::max_align_t[]>> m_chunks;
};

template <class T> struct ArenaAllocator {
    using value_type = T;
    NodeArena *arena;

    explicit ArenaAllocator(NodeArena *a) : arena(a) {}
    template <class U> ArenaAllocator(const ArenaAllocator<U> &other) : arena(other.arena) {}

    T *allocate(size_t n) { return static_cast<T *>(arena->get(n * sizeof(T))); }
    void deallocate(T *p, size_t n) { arena->put(p, n * sizeof(T)); }

    template <class U> bool operator==(const ArenaAllocator<U> &o) const
    {
        return arena == o.arena;
    }
    template <class U> bool operator!=(const ArenaAllocator<U> &o) const
    {
        return arena != o.arena;
    }
};

} // namespace xmem::sim
