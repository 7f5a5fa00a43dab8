// PtrMap: address → allocated Block, open addressing with linear probing and
// backward-shift deletion (no tombstones), so lookups stay one or two cache lines and the
// table never grows with the number of calls, only with the number of live allocations.
#pragma once

#include <cstdint>
#include <vector>

namespace xmem::sim
{

struct Block;

class PtrMap
{
  public:
    PtrMap() : m_slots(kInitialCapacity), m_mask(kInitialCapacity - 1), m_shift(64 - kInitialLog2)
    {
    }

    Block *find(uint64_t ptr) const
    {
        for (size_t i = slot_of(ptr);; i = (i + 1) & m_mask) {
            const Slot &s = m_slots[i];
            if (s.ptr == ptr && s.block != nullptr)
                return s.block;
            if (s.block == nullptr)
                return nullptr;
        }
    }
    // ptr must not be present.
    void insert(uint64_t ptr, Block *block)
    {
        if ((m_size + 1) * 2 > m_slots.size())
            grow();
        size_t i = slot_of(ptr);
        while (m_slots[i].block != nullptr)
            i = (i + 1) & m_mask;
        m_slots[i] = Slot{ptr, block};
        ++m_size;
    }
    bool erase(uint64_t ptr)
    {
        size_t i = slot_of(ptr);
        while (true) {
            if (m_slots[i].block == nullptr)
                return false;
            if (m_slots[i].ptr == ptr)
                break;
            i = (i + 1) & m_mask;
        }
        // Shift later members of the probe run back so no hole breaks a chain.
        size_t hole = i;
        for (size_t j = (i + 1) & m_mask; m_slots[j].block != nullptr; j = (j + 1) & m_mask) {
            const size_t home = slot_of(m_slots[j].ptr);
            const bool movable = ((j - home) & m_mask) >= ((j - hole) & m_mask);
            if (movable) {
                m_slots[hole] = m_slots[j];
                hole = j;
            }
        }
        m_slots[hole] = Slot{};
        --m_size;
        return true;
    }
    size_t size() const { return m_size; }
    template <class Fn> void for_each(Fn &&fn) const
    {
        for (const Slot &s : m_slots)
            if (s.block != nullptr)
                fn(s.ptr, s.block);
    }

  private:
    struct Slot {
        uint64_t ptr = 0;
        Block *block = nullptr; // nullptr = empty slot
    };
    static constexpr unsigned kInitialLog2 = 10;
    static constexpr size_t kInitialCapacity = size_t{1} << kInitialLog2;

    size_t slot_of(uint64_t ptr) const
    {
        // Addresses are 512-aligned: drop the zero bits, then Fibonacci-hash (top bits).
        return static_cast<size_t>(((ptr >> 9) * 0x9E3779B97F4A7C15ull) >> m_shift);
    }
    void grow()
    {
        std::vector<Slot> old;
        old.swap(m_slots);
        m_slots.assign(old.size() * 2, Slot{});
        m_mask = m_slots.size() - 1;
        --m_shift;
        m_size = 0;
        for (const Slot &s : old)
            if (s.block != nullptr)
                insert(s.ptr, s.block);
    }

    std::vector<Slot> m_slots;
    size_t m_mask;
    unsigned m_shift;
    size_t m_size = 0;
};

} // namespace xmem::sim
