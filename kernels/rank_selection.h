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

// The buckets holding the wanted ranks, found by scanning the counter's range of buckets.
// visit(ranks, k, offset, f) calls f(bucket, count, below) for each bucket (in value order) that
// holds one of ranks[0, k) (ascending; none below offset), below counting from offset.
template <DistributionCounter Counter>
struct ScannedBuckets {
  const Counter& c;
  template <class F>
  void visit(const int64_t* ranks, size_t k, int64_t below, F&& f) const {
    size_t i = 0;
    for_each_counted_bucket(c, [&](int64_t b, int64_t n) {
      if (i < k && ranks[i] < below + n) {
        f(b, n, below);
        while (i < k && ranks[i] < below + n) ++i;
      }
      below += n;
    });
  }
};

// The same from a list of the value's non-empty buckets (a value's range of buckets is mostly
// empty, and scanning even its list costs more than a search per wanted bucket), or of those
// among them that hold the ranks visited (Float32KeyCounter::take_histogram lists only those).
struct ListedBuckets {
  const ListedBucket* list;
  size_t listed;
  template <class F>
  void visit(const int64_t* ranks, size_t k, int64_t offset, F&& f) const {
    const ListedBucket* from = list;
    const ListedBucket* const end = list + listed;
    for (size_t i = 0; i < k && from != end;) {
      const int64_t rank = ranks[i] - offset;
      // The last bucket that starts at or before rank (the first one starts at 0).
      const ListedBucket* at =
          std::upper_bound(from, end, rank, [](int64_t r, const ListedBucket& b) { return r < b.below; }) - 1;
      const int64_t past = at->below + at->count;
      if (rank >= past) return;  // past the finite elements: the +Inf ones
      f(at->bucket, at->count, at->below + offset);
      while (i < k && ranks[i] - offset < past) ++i;
      from = at + 1;
    }
  }
};

// values[i] = the element of order ranks[i] among the counted value's non-NaN ones (ranks
// ascending, distinct, at most kMaxWantedBuckets). buckets (ScannedBuckets or ListedBuckets)
// finds the buckets that hold them.
template <DistributionCounter Counter, class Load, class Buckets>
void select_ranks(Counter& c, const TensorView& v, Load load, const int64_t* ranks, size_t k, double* values,
                  const Buckets& buckets_holding) {
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
  int64_t gathered = 0;
  const int64_t below_finite = c.inf(1);
  size_t i = 0;
  for (; i < k && ranks[i] < below_finite; ++i) values[i] = -kInf;
  buckets_holding.visit(ranks + i, k - i, below_finite, [&](int64_t b, int64_t n, int64_t below) {
    if (b == 0) {  // the zeros: all exactly 0
      for (; i < k && ranks[i] < below + n; ++i) values[i] = 0.0;
      return;
    }
    c.want(b < 0 ? 1 : 0, b < 0 ? -b : b, static_cast<uint8_t>(wanted));
    Wanted w{gathered, gathered + n, i, 0};
    for (; i < k && ranks[i] < below + n; ++i, ++w.ranks) positions[i] = gathered + ranks[i] - below;
    buckets[wanted++] = w;
    gathered += n;
  });
  for (; i < k; ++i) values[i] = kInf;  // past every finite element
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
// buckets as for select_ranks.
template <DistributionCounter Counter, class Load, class Buckets>
void percentiles_of(Counter& c, const TensorView& v, Load load, const double* ps, size_t count, double* out,
                    const Buckets& buckets) {
  auto select = [&](const int64_t* ranks, size_t k, double* values) {
    for (size_t from = 0; from < k; from += kMaxWantedBuckets)
      select_ranks(c, v, load, ranks + from, std::min(kMaxWantedBuckets, k - from), values + from, buckets);
  };
  percentiles_by_selection(v.numel - c.nan(), select, ps, count, out);
}
template <DistributionCounter Counter, class Load>
void percentiles_of(Counter& c, const TensorView& v, Load load, const double* ps, size_t count, double* out) {
  percentiles_of(c, v, load, ps, count, out, ScannedBuckets<Counter>{c});
}

}  // namespace trialdb::distribution_kernel
