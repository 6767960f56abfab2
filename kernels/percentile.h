// numpy's percentile with its default method ('linear'), over values already in order: where p
// falls between two order statistics and how the two are blended. One implementation for the
// ingest's distributions and sqlext's tensor_percentile(s), so both answer exactly as
// numpy.nanpercentile does on the values as float64 (including its NaN for an interpolation
// that touches an infinity).
#pragma once
#include <cmath>
#include <cstdint>

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

}  // namespace trialdb
