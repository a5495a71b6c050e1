// Positions of nodes by address, for the passes that visit a whole DAG: an open-addressing table
// (linear probing), a few times faster than std::unordered_map at a million nodes, where the
// passes would otherwise spend most of their time.
#pragma once

#include "troupe/graph/node.hpp"

#include <cstdint>
#include <span>
#include <vector>

namespace troupe::graph::detail {

class address_index {
public:
  static constexpr std::uint32_t absent = UINT32_MAX;

  explicit address_index(std::size_t expected = 16) { resize(expected * 2); }

  /// The position of `n`, or absent.
  std::uint32_t find(const node* n) const noexcept {
    for (std::size_t at = slot_of(n);; at = (at + 1) & mask_) {
      if (slots_[at].key == n)
        return slots_[at].value;
      if (slots_[at].key == nullptr)
        return absent;
    }
  }

  /// Adds `n` at `position` unless it is there; true if it was added.
  bool insert(const node* n, std::uint32_t position) {
    return find_or_insert(n, position) == absent;
  }

  /// The position of `n` if it is there (absent if it is there without one); else adds it at
  /// `position` and returns absent. One probe for what would be a find and an insert.
  std::uint32_t find_or_insert(const node* n, std::uint32_t position) {
    if (2 * (size_ + 1) > slots_.size())
      resize(slots_.size() * 2);
    for (std::size_t at = slot_of(n);; at = (at + 1) & mask_) {
      if (slots_[at].key == n)
        return slots_[at].value;
      if (slots_[at].key == nullptr) {
        slots_[at] = {n, position};
        ++size_;
        return absent;
      }
    }
  }

  /// Sets the position of `n`, which must be there.
  void assign(const node* n, std::uint32_t position) noexcept {
    for (std::size_t at = slot_of(n);; at = (at + 1) & mask_)
      if (slots_[at].key == n) {
        slots_[at].value = position;
        return;
      }
  }

private:
  struct slot {
    const node* key = nullptr;
    std::uint32_t value = absent;
  };

  std::size_t slot_of(const node* n) const noexcept {
    auto bits = reinterpret_cast<std::uintptr_t>(n);
    bits ^= bits >> 33;
    bits *= 0xff51afd7ed558ccdull; // a 64-bit mix, since heap addresses share their low bits
    bits ^= bits >> 33;
    return static_cast<std::size_t>(bits) & mask_;
  }

  void resize(std::size_t wanted) {
    std::size_t capacity = 16;
    while (capacity < wanted)
      capacity *= 2;
    std::vector<slot> old(capacity);
    old.swap(slots_);
    mask_ = capacity - 1;
    size_ = 0;
    for (const auto& s : old)
      if (s.key != nullptr)
        insert(s.key, s.value);
  }

  std::vector<slot> slots_;
  std::size_t mask_ = 0;
  std::size_t size_ = 0;
};

/// The nodes under `root`, children first, each instance once, their positions, and the
/// positions of each node's children (in the order of children()), so that passes over the
/// order need not look them up: at a million nodes, each lookup is a cache miss.
struct indexed_order {
  std::vector<node_ptr> nodes;
  address_index index;
  std::vector<std::uint32_t> child_offsets; // node i's children: [offsets[i], offsets[i + 1])
  std::vector<std::uint32_t> child_positions;

  std::span<const std::uint32_t> children_of(std::size_t i) const {
    return {child_positions.data() + child_offsets[i],
            child_positions.data() + child_offsets[i + 1]};
  }
};
indexed_order index_order(const node_ptr& root);

/// materialize_with_mpms's choice, by position: the nodes it would tag stored.
std::vector<bool> mpms_choice(const indexed_order& order);

} // namespace troupe::graph::detail
