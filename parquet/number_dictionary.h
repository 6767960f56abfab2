// The dictionary of an INT64 or DOUBLE column chunk: each distinct value's index, in the order
// the values were first seen, keyed by the value's 64 bits (so -0.0 and +0.0, or two NaNs with
// different payloads, are distinct entries, as their PLAIN bytes are).
//
// An open-addressing table rather than std::unordered_map: a lookup per row is what a
// dictionary-encoded number column costs (histogram_buckets' edges and counts change on every
// row), and a probe of a flat array of slots is a multiply, a shift and a compare or two.
//
// A caller that can name each value by a small integer key (histogram_buckets' edges: the bucket
// number) looks it up by that key first, in a direct-mapped cache of the values last found: an
// array index rather than a hash and a probe, and neighbouring buckets in neighbouring slots
// rather than anywhere in the table. The cache keeps each value's bits, so a key that names two
// values, or two keys that share a slot, only cost a lookup in the table: the index is always the
// table's.
//
//   NumberDictionary d;
//   auto [index, added] = d.insert(std::bit_cast<uint64_t>(2.5));   // {0, true}
//   d.insert(std::bit_cast<uint64_t>(2.5));                         // {0, false}
//   d.insert(std::bit_cast<uint64_t>(2.5), 7);                      // {0, false}, cached at key 7
#pragma once
#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstddef>
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
  // The index of `bits` if the cache holds it at `key` (any integer the caller names the value
  // by), else kNotCached: then insert(bits, key).
  static constexpr uint32_t kNotCached = UINT32_MAX;
  uint32_t cached(uint64_t bits, int64_t key) const {
    // An empty slot holds index_plus_one 0: 0 - 1 is kNotCached whatever its bits.
    const Slot& s = keyed_[keyed_slot(key)];
    return s.bits == bits ? s.index_plus_one - 1 : kNotCached;
  }
  // insert(bits), the index cached at `key`.
  std::pair<uint32_t, bool> insert(uint64_t bits, int64_t key) {
    if (keyed_mask_ == 0) {
      keyed_.assign(kKeyedSlots, Slot{});
      keyed_mask_ = kKeyedSlots - 1;
    }
    const auto found = insert(bits);
    keyed_[keyed_slot(key)] = {bits, found.first + 1};
    return found;
  }
  uint32_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  void clear() {
    slots_.clear();
    mask_ = 0;
    size_ = 0;
    std::fill(keyed_.begin(), keyed_.end(), Slot{});
  }

 private:
  struct Slot {
    uint64_t bits = 0;
    uint32_t index_plus_one = 0;  // 0: empty
  };
  static constexpr size_t kFirstSlots = 1024;
  static constexpr size_t kMaxLoadNumerator = 1, kMaxLoadDenominator = 2;  // at most half full
  static constexpr uint64_t kFibonacciMultiplier = 0x9E3779B97F4A7C15ull;
  // The keyed cache: 32 octaves of histogram buckets (128 each) of either sign without a collision,
  // 128 KB.
  static constexpr size_t kKeyedSlots = size_t{1} << 13;

  // A key's slot in the keyed cache: the keys of each sign in a half of their own. Modulo a power
  // of two, -k would share a slot with the positive key that mirrors k around a multiple of the
  // size, and the grid's buckets mirror so: the negative bucket of magnitude m and the positive
  // one of about 4/m (histogram_buckets' edges missed 35% of their lookups on the CNN profile).
  size_t keyed_slot(int64_t key) const {
    const auto k = static_cast<uint64_t>(key);
    return (k & (keyed_mask_ >> 1)) | ((k >> 63) * ((keyed_mask_ + 1) >> 1));
  }
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
  // By key modulo its size: one empty slot (mask 0) until the first keyed insert, kKeyedSlots after.
  std::vector<Slot> keyed_ = std::vector<Slot>(1);
  uint64_t keyed_mask_ = 0;
  size_t mask_ = 0;
  int shift_ = 64;
  uint32_t size_ = 0;
};

}  // namespace trialdb::parquet
