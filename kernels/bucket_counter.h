// BucketCounter: the counting pass of the distribution kernel for every dtype, on slots (a
// bucket of bucket_grid.h with its sign), and the gathering of the wanted buckets' elements
// (distribution_counter.h). Its counts are kept between the values of one thread: only the
// slots a value touched are cleared after it.
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

#include "kernels/bucket_grid.h"
#include "kernels/distribution_counter.h"
#include "schema/value_blob.h"

namespace trialdb::distribution_kernel {

// Counting slots: sign << kSignShift | the magnitude's slot, which is its bucket for finite
// non-zero magnitudes and kInfinitySlot for Inf. Zeros and NaNs are counted in registers and
// incremented into rotating junk slots instead: a ReLU output is half zeros, and incrementing one
// slot for each would be a chain of dependent stores.
inline constexpr int kSignShift = 18;
inline constexpr int64_t kInfinitySlot = kMaxBucket + 1;
static_assert(kInfinitySlot < (int64_t{1} << kSignShift));
inline constexpr int64_t kJunkSlots = 8;
inline constexpr int64_t kJunkBase = int64_t{2} << kSignShift;

// What computing a block's slots learns besides them.
struct BlockStats {
  int64_t zero = 0, nan = 0;
  int64_t lo = kMaxBucket, hi = 1;  // range of the finite non-zero magnitudes' buckets
};

// The slots of elements [start, start + len) of p into slots[0, len). Branch-free: whether an
// element is zero, NaN or infinite is arithmetic, not a jump (half of a ReLU output is zeros).
template <class Load>
void compute_slots(const uint8_t* p, int64_t start, int64_t len, Load load, int32_t* slots, BlockStats* st) {
  for (int64_t j = 0; j < len; ++j) {
    const uint64_t bits = double_bits(static_cast<double>(load(p, start + j)));
    const uint64_t mag = bits & kMagnitudeMask;
    const int64_t s = static_cast<int64_t>((mag - 1) >> kBucketShift) + 1 + (mag == kInfinityBits);
    const bool junk = mag == 0 || mag > kInfinityBits;
    const bool bucketed = !junk && mag != kInfinityBits;
    st->zero += mag == 0;
    st->nan += mag > kInfinityBits;
    st->lo = std::min(st->lo, bucketed ? s : kMaxBucket);
    st->hi = std::max(st->hi, bucketed ? s : int64_t{1});
    slots[j] = static_cast<int32_t>(junk ? kJunkBase + (j & (kJunkSlots - 1))
                                         : static_cast<int64_t>(bits >> 63) << kSignShift | s);
  }
}

// compute_slots for float32 through AVX2 (bucket_counter.cc). False where the CPU has no AVX2
// or the block holds a float32 subnormal: the portable loop then does the block.
bool compute_slots_float32_avx2(const uint8_t* p, int64_t start, int64_t len, int32_t* slots, BlockStats* st);
// compute_slots for float64 through AVX2: exactly the portable loop's slots and stats (the junk
// slots of zeros and NaNs aside, which only spread their increments). False where the CPU has no
// AVX2.
bool compute_slots_float64_avx2(const uint8_t* p, int64_t start, int64_t len, int32_t* slots, BlockStats* st);

template <class Load>
void block_slots(const TensorView& v, int64_t start, int64_t len, Load load, int32_t* slots, BlockStats* st) {
  if (v.dtype == DType::Float32 && compute_slots_float32_avx2(v.data, start, len, slots, st)) return;
  if (v.dtype == DType::Float64 && compute_slots_float64_avx2(v.data, start, len, slots, st)) return;
  compute_slots(v.data, start, len, load, slots, st);
}

// Appends the elements [start, start + len) of v whose slot is wanted to their bucket's range of
// buffer: wanted[slots[j]] is the bucket's ordinal (0: not wanted). Eight lookups are OR-ed
// before one branch, as hits are rare.
template <class Load, class Elem>
void gather_wanted_branching(const TensorView& v, int64_t start, int64_t len, const int32_t* slots,
                             const uint8_t* wanted, Load load, int64_t* cursor, Elem* buffer) {
  int64_t j = 0;
  for (; j + 8 <= len; j += 8) {
    uint8_t any = 0;
    for (int q = 0; q < 8; ++q) any |= wanted[slots[j + q]];
    if (any)
      for (int q = 0; q < 8; ++q)
        if (const uint8_t b = wanted[slots[j + q]]) buffer[cursor[b]++] = load(v.data, start + j + q);
  }
  for (; j < len; ++j)
    if (const uint8_t b = wanted[slots[j]]) buffer[cursor[b]++] = load(v.data, start + j);
}

class BucketCounter {
 public:
  BucketCounter() : counts_(kJunkBase + kJunkSlots, 0), wanted_(kJunkBase + kJunkSlots, 0) {}

  // A value of up to this many elements keeps its slots from the counting pass for the
  // gathering pass, which then need not compute them again (2 MiB per counter at most).
  static constexpr int64_t kMaxKeptSlots = int64_t{1} << 19;

  template <class Load>
  void count(const TensorView& v, Load load) {
    uint32_t* const counts = counts_.data();
    int32_t block[kBlock];
    slots_kept_ = v.numel <= kMaxKeptSlots;
    if (slots_kept_ && kept_slots_.size() < static_cast<size_t>(v.numel))
      kept_slots_.resize(static_cast<size_t>(v.numel));
    BlockStats st;
    for (int64_t start = 0; start < v.numel; start += kBlock) {
      const int64_t len = std::min(kBlock, v.numel - start);
      int32_t* const slots = slots_kept_ ? kept_slots_.data() + start : block;
      block_slots(v, start, len, load, slots, &st);
      for (int64_t j = 0; j < len; ++j) ++counts[slots[j]];
    }
    lo_ = st.lo, hi_ = st.hi, zero_ = st.zero, nan_ = st.nan;
  }

  int64_t zero() const { return zero_; }
  int64_t nan() const { return nan_; }
  int64_t inf(int sign) const { return counts_[slot(sign, kInfinitySlot)]; }
  int64_t lo() const { return lo_; }
  int64_t hi() const { return hi_; }
  const uint32_t* counts(int sign) const { return counts_.data() + slot(sign, lo_); }
  bool extremes(double*, double*) const { return false; }

  void want(int sign, int64_t s, uint8_t ordinal) {
    wanted_[slot(sign, s)] = ordinal;
    wanted_slots_.push_back(slot(sign, s));
  }
  template <class Load, class Elem>
  void gather(const TensorView& v, Load load, int64_t* cursor, Elem* buffer) {
    int32_t block[kBlock];
    BlockStats st;
    for (int64_t start = 0; start < v.numel; start += kBlock) {
      const int64_t len = std::min(kBlock, v.numel - start);
      const int32_t* slots = block;
      if (slots_kept_) slots = kept_slots_.data() + start;
      else block_slots(v, start, len, load, block, &st);
      gather_wanted_branching(v, start, len, slots, wanted_.data(), load, cursor, buffer);
    }
  }
  void unwant();

  // Clears what the last value touched.
  void clear();

 private:
  static int64_t slot(int sign, int64_t s) { return static_cast<int64_t>(sign) << kSignShift | s; }

  std::vector<uint32_t> counts_;
  std::vector<uint8_t> wanted_;        // the ordinal of the wanted bucket of a slot, 0 for none
  std::vector<int64_t> wanted_slots_;  // which they are
  std::vector<int32_t> kept_slots_;    // the counted value's slots, when slots_kept_
  bool slots_kept_ = false;
  int64_t lo_ = kMaxBucket, hi_ = 1, zero_ = 0, nan_ = 0;
};

static_assert(DistributionCounter<BucketCounter>);

}  // namespace trialdb::distribution_kernel
