// compute_distribution, compute_reductions_and_distribution and compute_percentiles
// (distribution.h): each value goes to the kernel that suits it: small values of dtypes a float
// holds exactly are sorted (sorted_elements.h), float32 values too large for that counted on their
// keys in the reductions' pass where both are wanted (and large ones alone likewise:
// float32_key_counter.h), the rest counted by bucket (bucket_counter.h). The counts and histogram are read off the
// sorted elements or the counter, and the percentiles taken by index or selected (rank_selection.h).
#include "kernels/distribution.h"

#include <algorithm>
#include <memory>
#include <type_traits>
#include <vector>

#include "kernels/bucket_counter.h"
#include "kernels/bucket_runs.h"
#include "kernels/element_loader.h"
#include "kernels/float32_key_counter.h"
#include "kernels/float32_widening.h"
#include "kernels/rank_selection.h"
#include "kernels/sorted_elements.h"
#include "kernels/thread_scratch.h"

namespace trialdb {

namespace {

using distribution_kernel::BucketCounter;
using distribution_kernel::DistributionCounter;
using distribution_kernel::Float32KeyCounter;
using distribution_kernel::ListedBucket;
using distribution_kernel::ListedBuckets;
using distribution_kernel::SortedElements;

// What fill_distribution keeps from value to value: the list of a counted value's non-empty
// buckets and the histogram's writer, pooled like the counters (a thread_local would start empty,
// and grow, on every thread the ingest starts).
struct FillScratch {
  std::unique_ptr<ListedBucket[]> buckets;  // room for `room` of them, not zeroed
  size_t room = 0;
  BucketRunWriter runs;
  HistogramBlobWriter blob;  // the key counter's runs (Float32KeyCounter::take_histogram)
  void clear() {             // a value given up part-way leaves its runs behind
    runs.clear();
    blob.clear();
  }
};

BucketCounter& thread_bucket_counter() { return thread_scratch<BucketCounter>(); }
SortedElements& thread_sorted_elements() { return thread_scratch<SortedElements>(); }
Float32KeyCounter& thread_key_counter() { return thread_scratch<Float32KeyCounter>(); }

// Clears a counter when the value's work is done, also when it throws: a counter goes on to
// the thread's next value or to another thread.
template <class Counter>
struct ClearAfter {
  Counter& counter;
  ~ClearAfter() { counter.clear(); }
};

// Whether v is counted by the key counter in a pass of its own (else by the bucket counter).
bool uses_key_counter(const TensorView& v) {
  return v.dtype == DType::Float32 && v.numel >= Float32KeyCounter::kMinElements && v.numel <= kMaxDistributionElements;
}

// Whether v's keys are counted in its reductions' pass: float32 values from kMinKeyCountedElements
// on. That pass finds the range of keys the value touched (Float32KeyCounter::finish_count), so the
// counter's cost per value is that of its buckets, without a pass over the elements of its own:
// from a few hundred elements on, less than sorting them costs (a 1,024-element value: callgrind,
// bench/README.md), though SortedElements takes up to kMaxElements where the keys are not counted
// in the reductions' pass (compute_distribution).
constexpr int64_t kMinKeyCountedElements = 256;
bool counts_keys_with_reductions(const TensorView& v) {
  return v.dtype == DType::Float32 && v.numel >= kMinKeyCountedElements && v.numel <= kMaxDistributionElements;
}

// How a value comes to with_counted: to be counted, or counted by the thread's key counter
// already (in the reductions' pass), or declined by it.
enum class Keys { kCount, kCounted, kDeclined };

// Sorts or counts v with the kernel that suits it and calls f(sorted elements or counter, load),
// then clears the counter. False for dtypes without an order and values over
// kMaxDistributionElements.
template <class F>
bool with_counted(const TensorView& v, F&& f, Keys keys = Keys::kCount) {
  if (!dtype_is_real(v.dtype) || v.numel > kMaxDistributionElements) return false;
  return distribution_kernel::with_loader(v, [&](auto load) {
    if constexpr (std::is_same_v<decltype(load(v.data, 0)), float>) {
      if (v.numel <= SortedElements::kMaxElements && keys != Keys::kCounted) {
        SortedElements& sorted = thread_sorted_elements();
        if (sorted.sort(v, load)) {
          f(sorted, load);
          return;
        }
      }
    }
    if (keys == Keys::kCounted || (keys == Keys::kCount && uses_key_counter(v))) {
      Float32KeyCounter& counter = thread_key_counter();
      if (keys == Keys::kCounted || counter.count(v)) {
        ClearAfter<Float32KeyCounter> clear{counter};
        f(counter, load);
        return;
      }
    }
    BucketCounter& buckets = thread_bucket_counter();
    ClearAfter<BucketCounter> clear{buckets};
    buckets.count(v, load);
    f(buckets, load);
  });
}

// Every bucket of the counted or sorted value in value order: f(bucket, count) for the non-empty
// ones.
template <DistributionCounter Counter, class F>
void for_each_bucket(const Counter& c, F&& f) {
  distribution_kernel::for_each_counted_bucket(c, f);
}
template <class F>
void for_each_bucket(const SortedElements& s, F&& f) {
  s.for_each_bucket(f);
}

// The percentiles ps[0, count) of the counted or sorted value v: out[i].
template <DistributionCounter Counter, class Load>
void percentiles(Counter& c, const TensorView& v, Load load, const double* ps, size_t count, double* out) {
  if constexpr (std::is_same_v<Counter, Float32KeyCounter>) c.merge_range();
  distribution_kernel::percentiles_of(c, v, load, ps, count, out);
}
template <class Load>
void percentiles(SortedElements& s, const TensorView& v, Load, const double* ps, size_t count, double* out) {
  auto select = [&](const int64_t* ranks, size_t k, double* values) { s.select(ranks, k, values); };
  percentiles_by_selection(v.numel - s.nan(), select, ps, count, out);
}

// The distribution of the value counted or sorted in c.
template <class Counter, class Load>
void fill_distribution(Counter& c, const TensorView& v, Load load, Distribution* out) {
  out->nan = c.nan();
  out->zero = c.zero();
  out->pos_inf = c.inf(0);
  out->neg_inf = c.inf(1);
  // The value's non-empty buckets are listed with their running counts first, then written as the
  // histogram's runs in one loop (a call per bucket, or the runs written as the buckets are read,
  // cost more); the list gives the counts by sign (one search for where the negative buckets end)
  // and serves the selection of a counted value's percentiles, which finds the buckets holding
  // the wanted ranks by binary search instead of scanning the buckets again.
  constexpr bool kCounted = DistributionCounter<Counter>;
  FillScratch& scratch = thread_scratch<FillScratch>();
  ClearAfter<FillScratch> clear{scratch};
  // Room for every bucket the value can have, so that listing one is a store: the range's (both
  // signs and zero) for a counter, one per element and the zeros' for the sorted elements.
  size_t most;
  if constexpr (kCounted) most = 2 * static_cast<size_t>(std::max<int64_t>(c.hi() - c.lo() + 1, 0)) + 1;
  else most = static_cast<size_t>(v.numel) + 1;
  if (scratch.room < most) {
    scratch.room = std::max(most, 2 * scratch.room);
    scratch.buckets.reset(new ListedBucket[scratch.room]);
  }
  ListedBucket* const buckets = scratch.buckets.get();
  BucketRunWriter& runs = scratch.runs;
  size_t listed = 0;
  int64_t below = 0;
  for_each_bucket(c, [&](int64_t bucket, int64_t count) {
    buckets[listed++] = {bucket, count, below};
    below += count;
  });
  runs.add_all(buckets, listed);
  out->histogram = runs.finish();
  const ListedBucket* const non_negative =
      std::partition_point(buckets, buckets + listed, [](const ListedBucket& b) { return b.bucket < 0; });
  out->negative = non_negative == buckets + listed ? below : non_negative->below;
  out->positive = below - out->negative - out->zero;
  if constexpr (kCounted) {
    distribution_kernel::percentiles_of(c, v, load, kDistributionPercents, kDistributionPercentiles, out->percentile,
                                        ListedBuckets{buckets, listed});
  } else {
    percentiles(c, v, load, kDistributionPercents, kDistributionPercentiles, out->percentile);
  }
}

// The key counter's distribution: its tables read once (Float32KeyCounter::take_histogram), which
// also finds the buckets holding the percentiles' ranks, so no list of buckets is made.
template <class Load>
void fill_distribution(Float32KeyCounter& c, const TensorView& v, Load load, Distribution* out) {
  out->nan = c.nan();
  out->zero = c.zero();
  out->pos_inf = c.inf(0);
  out->neg_inf = c.inf(1);
  const int64_t ordered = v.numel - c.nan();  // every one finite: the counter declines infinities
  int64_t ranks[2 * kDistributionPercentiles];
  const size_t k = ordered ? percentile_ranks(ordered, kDistributionPercents, kDistributionPercentiles, ranks) : 0;
  ListedBucket found[2 * kDistributionPercentiles];
  FillScratch& scratch = thread_scratch<FillScratch>();
  ClearAfter<FillScratch> clear{scratch};
  const Float32KeyCounter::TakenHistogram taken = c.take_histogram(ranks, k, &scratch.blob, found);
  out->histogram = scratch.blob.finish();
  out->negative = taken.negative;
  out->positive = ordered - taken.negative - out->zero;
  distribution_kernel::percentiles_of(c, v, load, kDistributionPercents, kDistributionPercentiles, out->percentile,
                                      ListedBuckets{found, taken.found});
}

}  // namespace

bool compute_distribution(const TensorView& v, Distribution* out) {
  return with_counted(v, [&](auto& c, auto load) { fill_distribution(c, v, load, out); });
}

bool compute_reductions_and_distribution(const TensorView& v, Reductions* reductions, bool* has_reductions,
                                         Distribution* out) {
  if (TensorView wide; widen_to_float32(v, &wide))
    return compute_reductions_and_distribution(wide, reductions, has_reductions, out);
  Keys keys = Keys::kCount;
  if (counts_keys_with_reductions(v)) {
    Reductions unwanted;
    *has_reductions = reductions != nullptr;
    const bool counted = count_keys_with_reductions(v, reductions ? reductions : &unwanted, &thread_key_counter());
    keys = counted ? Keys::kCounted : Keys::kDeclined;
  } else {
    *has_reductions = reductions && compute_reductions(v, reductions);
  }
  return with_counted(
      v, [&](auto& c, auto load) { fill_distribution(c, v, load, out); }, keys);
}

int64_t compute_percentiles(const TensorView& v, const double* ps, size_t count, double* out) {
  int64_t nan = -1;
  if (!with_counted(v, [&](auto& c, auto load) {
        nan = c.nan();
        percentiles(c, v, load, ps, count, out);
      }))
    return -1;
  return nan;
}

}  // namespace trialdb
