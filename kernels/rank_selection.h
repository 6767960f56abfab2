// The selection pass of the distribution kernel: exact order statistics and numpy's percentiles
// of a value counted by a DistributionCounter (distribution_counter.h), without sorting it. The
// elements of each bucket holding a wanted rank are gathered into a range of their own (their
// counts are known) and each rank is selected within its bucket's range (nth_element).
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <vector>

#include "kernels/distribution_counter.h"
#include "kernels/percentile.h"
#include "schema/value_blob.h"

namespace trialdb::distribution_kernel {

// Selects the elements at `positions` (ascending, distinct) of [first, last) into place.
template <class It>
void multi_select(It first, It last, It base, const int64_t* positions, size_t count) {
  if (count == 0 || first == last) return;
  const size_t mid = count / 2;
  const It nth = base + positions[mid];
  std::nth_element(first, nth, last);
  multi_select(first, nth, base, positions, mid);
  multi_select(nth + 1, last, base, positions + mid + 1, count - mid - 1);
}

// Whether the kNonzeroGroup counts at p are all 0.
inline constexpr int64_t kNonzeroGroup = 8;
inline bool count_group_empty(const uint32_t* p) {
  uint64_t w[kNonzeroGroup / 2];
  std::memcpy(w, p, sizeof w);
  return (w[0] | w[1] | w[2] | w[3]) == 0;
}

// f(i, counts[i]) for every i in [0, n) whose count is not 0, ascending (or descending when
// kDown). Most of a value's range of buckets is empty: groups of them are passed over at once.
template <bool kDown, class F>
void for_each_nonzero_count(const uint32_t* counts, int64_t n, F&& f) {
  if constexpr (kDown) {
    int64_t i = n;
    for (; i >= kNonzeroGroup; i -= kNonzeroGroup)
      if (!count_group_empty(counts + i - kNonzeroGroup))
        for (int64_t j = i - 1; j >= i - kNonzeroGroup; --j)
          if (counts[j]) f(j, counts[j]);
    while (i-- > 0)
      if (counts[i]) f(i, counts[i]);
  } else {
    int64_t i = 0;
    for (; i + kNonzeroGroup <= n; i += kNonzeroGroup)
      if (!count_group_empty(counts + i))
        for (int64_t j = i; j < i + kNonzeroGroup; ++j)
          if (counts[j]) f(j, counts[j]);
    for (; i < n; ++i)
      if (counts[i]) f(i, counts[i]);
  }
}

// f(bucket, count) for every non-empty bucket of the counted value, in value order: a negative
// bucket as -s, the zeros as 0, a positive bucket as s. It scans the counter's range of buckets.
template <DistributionCounter Counter, class F>
void for_each_counted_bucket(const Counter& c, F&& f) {
  const int64_t lo = c.lo(), n = c.hi() - lo + 1;
  if (n > 0) for_each_nonzero_count<true>(c.counts(1), n, [&](int64_t i, int64_t count) { f(-(lo + i), count); });
  if (c.zero()) f(int64_t{0}, c.zero());
  if (n > 0) for_each_nonzero_count<false>(c.counts(0), n, [&](int64_t i, int64_t count) { f(lo + i, count); });
}

// values[i] = the element of order ranks[i] among the counted value's non-NaN ones (ranks
// ascending, distinct, at most kMaxWantedBuckets). each_bucket(f) calls f as
// for_each_counted_bucket does, from a list of the non-empty buckets where the caller has one
// (a value's range of buckets is mostly empty: scanning it again costs more than the list).
template <DistributionCounter Counter, class Load, class EachBucket>
void select_ranks(Counter& c, const TensorView& v, Load load, const int64_t* ranks, size_t k, double* values,
                  EachBucket&& each_bucket) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  // The first and the last non-NaN element are the extremes, where the counter knows them; a
  // non-zero extreme lies in a bucket, which then need not be gathered for it.
  if (double lo, hi; k && c.extremes(&lo, &hi)) {
    if (ranks[k - 1] == v.numel - c.nan() - 1 && hi != 0) values[--k] = hi;
    if (k && ranks[0] == 0 && lo != 0) {
      values[0] = lo;
      ++ranks, ++values, --k;
    }
  }
  struct Wanted {
    int64_t begin, end;        // its range of the gathered elements
    size_t first_rank, ranks;  // which of ranks[] fall in it
  };
  // On the stack (k <= kMaxWantedBuckets): most values' selection allocates nothing but its buffer.
  Wanted buckets[kMaxWantedBuckets + 1];  // [0]: ordinal 0, not wanted
  size_t wanted = 1;
  int64_t positions[kMaxWantedBuckets];
  int64_t below = 0, gathered = 0;
  size_t i = 0;
  auto exact = [&](int64_t n, double value) {  // a region whose elements are all `value`
    for (; i < k && ranks[i] < below + n; ++i) values[i] = value;
    below += n;
  };
  auto bucket = [&](int sign, int64_t s, int64_t n) {
    if (i < k && ranks[i] < below + n) {
      c.want(sign, s, static_cast<uint8_t>(wanted));
      Wanted w{gathered, gathered + n, i, 0};
      for (; i < k && ranks[i] < below + n; ++i, ++w.ranks) positions[i] = gathered + ranks[i] - below;
      buckets[wanted++] = w;
      gathered += n;
    }
    below += n;
  };
  exact(c.inf(1), -kInf);
  each_bucket([&](int64_t b, int64_t n) {
    if (b == 0) exact(n, 0.0);
    else if (b < 0) bucket(1, -b, n);
    else bucket(0, b, n);
  });
  exact(c.inf(0), kInf);
  if (!gathered) return;
  using Elem = decltype(load(v.data, 0));
  std::unique_ptr<Elem[]> buffer(new Elem[static_cast<size_t>(gathered)]);
  int64_t cursor[kMaxWantedBuckets + 1];
  for (size_t b = 1; b < wanted; ++b) cursor[b] = buckets[b].begin;
  c.gather(v, load, cursor, buffer.get());
  c.unwant();
  Elem* const first = buffer.get();
  for (size_t b = 1; b < wanted; ++b) {
    const Wanted& w = buckets[b];
    multi_select(first + w.begin, first + w.end, first, positions + w.first_rank, w.ranks);
    for (size_t r = w.first_rank; r < w.first_rank + w.ranks; ++r) values[r] = static_cast<double>(first[positions[r]]);
  }
}

// The percentiles ps[0, count) of the counted value: out[i] (NaN when every element is NaN).
// each_bucket as for select_ranks.
template <DistributionCounter Counter, class Load, class EachBucket>
void percentiles_of(Counter& c, const TensorView& v, Load load, const double* ps, size_t count, double* out,
                    EachBucket&& each_bucket) {
  auto select = [&](const int64_t* ranks, size_t k, double* values) {
    for (size_t from = 0; from < k; from += kMaxWantedBuckets)
      select_ranks(c, v, load, ranks + from, std::min(kMaxWantedBuckets, k - from), values + from, each_bucket);
  };
  percentiles_by_selection(v.numel - c.nan(), select, ps, count, out);
}
template <DistributionCounter Counter, class Load>
void percentiles_of(Counter& c, const TensorView& v, Load load, const double* ps, size_t count, double* out) {
  percentiles_of(c, v, load, ps, count, out, [&c](auto&& f) { for_each_counted_bucket(c, f); });
}

}  // namespace trialdb::distribution_kernel
