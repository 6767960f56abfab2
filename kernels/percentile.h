// numpy's percentile with its default method ('linear'), over values already in order: where p
// falls between two order statistics and how the two are blended. One implementation for the
// ingest's distributions and sqlext's tensor_percentile(s), so both answer exactly as
// numpy.nanpercentile does on the values as float64 (including its NaN for an interpolation
// that touches an infinity).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

namespace trialdb {

// Where a percentile of m > 0 ordered values is: blend(x[lower], x[upper], gamma).
struct PercentilePosition {
  int64_t lower;
  int64_t upper;
  double gamma;
};

// The quantile q (in [0, 1]) likewise: numpy's percentile p is the quantile p / 100.
inline PercentilePosition quantile_position(int64_t m, double q) {
  // numpy: virtual index (m - 1) * q; from the last index on, both neighbours are the last
  // value and gamma is measured from index -1.
  const double virtual_index = static_cast<double>(m - 1) * q;
  if (virtual_index >= static_cast<double>(m - 1)) return {m - 1, m - 1, virtual_index + 1};
  const double lower = std::floor(virtual_index);
  const auto i = static_cast<int64_t>(lower);
  return {i, i + 1, virtual_index - lower};
}

inline PercentilePosition percentile_position(int64_t m, double p) { return quantile_position(m, p / 100); }

// numpy's _lerp: a + (b - a) * t, computed from b's side when t >= 0.5.
inline double percentile_blend(double a, double b, double t) {
  const double diff = b - a;
  return t >= 0.5 ? b - diff * (1 - t) : a + diff * t;
}

// The distinct order statistics the percentiles ps[0, count) of m > 0 ordered values fall on or
// between, ascending, into ranks (room for 2 x count); returns how many.
inline size_t percentile_ranks(int64_t m, const double* ps, size_t count, int64_t* ranks) {
  size_t k = 0;
  for (size_t i = 0; i < count; ++i) {
    const PercentilePosition at = percentile_position(m, ps[i]);
    ranks[k++] = at.lower;
    ranks[k++] = at.upper;
  }
  std::sort(ranks, ranks + k);
  return static_cast<size_t>(std::unique(ranks, ranks + k) - ranks);
}

// The percentiles ps[0, count) of m ordered values (out[i]; NaN for every p when m is 0), given
// select(ranks, k, values), which sets values[i] to the value of order ranks[i] for k ascending
// distinct ranks (percentile_ranks): each order statistic a percentile falls on or between is
// selected once.
template <class Select>
void percentiles_by_selection(int64_t m, Select&& select, const double* ps, size_t count, double* out) {
  if (m == 0) {
    std::fill(out, out + count, std::numeric_limits<double>::quiet_NaN());
    return;
  }
  // The ranks of a few percentiles (the ingest's, once per value) are kept on the stack.
  constexpr size_t kRanksOnStack = 32;
  int64_t ranks_on_stack[kRanksOnStack];
  double values_on_stack[kRanksOnStack];
  std::vector<int64_t> ranks_on_heap;
  std::vector<double> values_on_heap;
  int64_t* ranks = ranks_on_stack;
  double* values = values_on_stack;
  if (2 * count > kRanksOnStack) {
    ranks_on_heap.resize(2 * count);
    values_on_heap.resize(2 * count);
    ranks = ranks_on_heap.data();
    values = values_on_heap.data();
  }
  const size_t k = percentile_ranks(m, ps, count, ranks);
  select(static_cast<const int64_t*>(ranks), k, values);
  auto value = [&](int64_t rank) { return values[std::lower_bound(ranks, ranks + k, rank) - ranks]; };
  for (size_t i = 0; i < count; ++i) {
    const PercentilePosition at = percentile_position(m, ps[i]);
    out[i] = percentile_blend(value(at.lower), value(at.upper), at.gamma);
  }
}

}  // namespace trialdb
