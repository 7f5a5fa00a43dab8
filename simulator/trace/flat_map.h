// FlatMap: an open-addressing hash map from uint64 keys to small values.
// Why not std::unordered_map: replay does one insert and one erase per storage, at
// >10 M events/s; a node allocation per insert would dominate. Linear probing with
// backward-shift deletion keeps the table tombstone-free, so memory stays proportional
// to the live keys (the table halves when it is mostly empty).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace xmem::trace
{

template <class Value> class FlatMap
{
  public:
    FlatMap() { rehash(k_min_capacity); }

    size_t size() const { return m_size; }

    // Returns nullptr when the key is absent.
    Value *find(uint64_t key)
    {
        size_t slot = home(key);
        while (m_used[slot]) {
            if (m_keys[slot] == key)
                return &m_values[slot];
            slot = (slot + 1) & m_mask;
        }
        return nullptr;
    }

    // Inserts key → value; returns false (and changes nothing) if the key is present.
    bool insert(uint64_t key, const Value &value)
    {
        if ((m_size + 1) * 4 > (m_mask + 1) * 3)
            rehash((m_mask + 1) * 2);
        size_t slot = home(key);
        while (m_used[slot]) {
            if (m_keys[slot] == key)
                return false;
            slot = (slot + 1) & m_mask;
        }
        m_used[slot] = 1;
        m_keys[slot] = key;
        m_values[slot] = value;
        ++m_size;
        return true;
    }

    // Removes the key and stores its value in *out (if out is non-null); false if absent.
    bool erase(uint64_t key, Value *out = nullptr)
    {
        size_t slot = home(key);
        while (m_used[slot] && m_keys[slot] != key)
            slot = (slot + 1) & m_mask;
        if (!m_used[slot])
            return false;
        if (out)
            *out = m_values[slot];
        shift_back_from(slot);
        --m_size;
        if (m_mask + 1 > k_min_capacity && m_size * 8 < m_mask + 1)
            rehash((m_mask + 1) / 2);
        return true;
    }

    template <class Fn> void for_each(Fn &&fn) const
    {
        for (size_t i = 0; i <= m_mask; ++i)
            if (m_used[i])
                fn(m_keys[i], m_values[i]);
    }

  private:
    static constexpr size_t k_min_capacity = 64;

    // splitmix64 finaliser: storage ids and device addresses are far from uniform.
    size_t home(uint64_t key) const
    {
        key ^= key >> 30;
        key *= 0xbf58476d1ce4e5b9ULL;
        key ^= key >> 27;
        key *= 0x94d049bb133111ebULL;
        key ^= key >> 31;
        return static_cast<size_t>(key) & m_mask;
    }

    // Backward-shift deletion: pull later members of the probe run into the hole so that
    // lookups never need tombstones.
    void shift_back_from(size_t hole)
    {
        size_t next = (hole + 1) & m_mask;
        while (m_used[next]) {
            size_t want = home(m_keys[next]);
            bool movable = ((next - want) & m_mask) >= ((next - hole) & m_mask);
            if (movable) {
                m_keys[hole] = m_keys[next];
                m_values[hole] = m_values[next];
                hole = next;
            }
            next = (next + 1) & m_mask;
        }
        m_used[hole] = 0;
    }

    void rehash(size_t capacity)
    {
        std::vector<uint8_t> used(capacity, 0);
        std::vector<uint64_t> keys(capacity);
        std::vector<Value> values(capacity);
        used.swap(m_used);
        keys.swap(m_keys);
        values.swap(m_values);
        m_mask = capacity - 1;
        m_size = 0;
        for (size_t i = 0; i < used.size(); ++i)
            if (used[i])
                insert(keys[i], values[i]);
    }

    std::vector<uint8_t> m_used;
    std::vector<uint64_t> m_keys;
    std::vector<Value> m_values;
    size_t m_mask = 0;
    size_t m_size = 0;
};

} // namespace xmem::trace
