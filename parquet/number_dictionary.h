// The dictionary of an INT64 or DOUBLE column chunk: each distinct value's index, in the order
// the values were first seen, keyed by the value's 64 bits (so -0.0 and +0.0, or two NaNs with
// different payloads, are distinct entries, as their PLAIN bytes are).
//
// An open-addressing table rather than std::unordered_map: a lookup per row is what a
// dictionary-encoded number column costs (histogram_buckets' edges and counts change on every
// row), and a probe of a flat array of slots is a multiply, a shift and a compare or two.
//
//   NumberDictionary d;
//   auto [index, added] = d.insert(std::bit_cast<uint64_t>(2.5));   // {0, true}
//   d.insert(std::bit_cast<uint64_t>(2.5));                         // {0, false}
#pragma once
#include <bit>
#include <cstdint>
#include <utility>
#include <vector>

namespace trialdb::parquet {

class NumberDictionary {
 public:
  // The index of `bits`, and whether this call added it.
  std::pair<uint32_t, bool> insert(uint64_t bits) {
    if ((size_ + 1) * kMaxLoadDenominator > slots_.size() * kMaxLoadNumerator) grow();
    for (size_t at = slot_of(bits);; at = (at + 1) & mask_) {
      Slot& s = slots_[at];
      if (s.index_plus_one == 0) {
        s = {bits, ++size_};
        return {s.index_plus_one - 1, true};
      }
      if (s.bits == bits) return {s.index_plus_one - 1, false};
    }
  }
  uint32_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  void clear() {
    slots_.clear();
    mask_ = 0;
    size_ = 0;
  }

 private:
  struct Slot {
    uint64_t bits = 0;
    uint32_t index_plus_one = 0;  // 0: empty
  };
  static constexpr size_t kFirstSlots = 1024;
  static constexpr size_t kMaxLoadNumerator = 1, kMaxLoadDenominator = 2;  // at most half full
  static constexpr uint64_t kFibonacciMultiplier = 0x9E3779B97F4A7C15ull;

  size_t slot_of(uint64_t bits) const {
    // The high bits of a Fibonacci hash: consecutive integers and doubles that differ only in
    // their low mantissa bits still land apart.
    return static_cast<size_t>((bits * kFibonacciMultiplier) >> shift_) & mask_;
  }
  void grow() {
    std::vector<Slot> old = std::move(slots_);
    const size_t slots = old.empty() ? kFirstSlots : old.size() * 2;
    slots_.assign(slots, Slot{});
    mask_ = slots - 1;
    shift_ = 64 - std::countr_zero(slots);
    for (const Slot& s : old) {
      if (s.index_plus_one == 0) continue;
      size_t at = slot_of(s.bits);
      while (slots_[at].index_plus_one != 0) at = (at + 1) & mask_;
      slots_[at] = s;
    }
  }

  std::vector<Slot> slots_;
  size_t mask_ = 0;
  int shift_ = 64;
  uint32_t size_ = 0;
};

}  // namespace trialdb::parquet
