// What the selection of order statistics (rank_selection.h) asks of a counter of a value's
// elements by bucket. Two counters offer it: BucketCounter (bucket_counter.h) for every dtype,
// and Float32KeyCounter (float32_key_counter.h) for large float32 values. Both count a value
// in one pass, then gather the elements of the buckets marked wanted in a second pass, so the
// elements copied are those of a few buckets, not the whole value.
#pragma once
#include <concepts>
#include <cstddef>
#include <cstdint>

namespace trialdb::distribution_kernel {

// Elements whose slots or keys are computed together before they are counted or gathered.
inline constexpr int64_t kBlock = 256;
// Order statistics selected in one gathering pass: each wants at most one bucket, and a wanted
// bucket's ordinal is a byte.
inline constexpr size_t kMaxWantedBuckets = 128;

// A non-empty bucket of a counted value in a list of them (value order), with the number of its
// finite elements in the buckets before it, so that the bucket holding a rank is found by a
// binary search instead of a scan of every bucket (rank_selection.h, ListedBuckets).
struct ListedBucket {
  int64_t bucket, count, below;
};

// A counter holding one counted value. Buckets are numbered as in bucket_grid.h, by magnitude
// and sign (0: positive, 1: negative); finite non-zero ones lie in [lo(), hi()] (empty when
// lo() > hi()), counts(sign) points at the counts of buckets lo() to hi() of a sign, in order
// (where lo() <= hi()). extremes() gives the smallest and largest non-NaN element where the counter
// tracked them (false where not). want() marks a bucket as the ordinal-th wanted (ordinals 1
// up); gather() appends each element of a wanted bucket at buffer[cursor[ordinal]++]; unwant()
// unmarks them all.
template <class C>
concept DistributionCounter = requires(C& c, const C& k, int sign, int64_t s, uint8_t ordinal, double x) {
  { k.zero() } -> std::convertible_to<int64_t>;
  { k.nan() } -> std::convertible_to<int64_t>;
  { k.inf(sign) } -> std::convertible_to<int64_t>;
  { k.lo() } -> std::convertible_to<int64_t>;
  { k.hi() } -> std::convertible_to<int64_t>;
  { k.counts(sign) } -> std::same_as<const uint32_t*>;
  { k.extremes(&x, &x) } -> std::same_as<bool>;
  c.want(sign, s, ordinal);
  c.unwant();
  c.clear();
};

}  // namespace trialdb::distribution_kernel
