// Histogram bins over a value range [lo, hi], shared by tensor_histogram (sqlext) and the
// distribution plot (src): where a value falls, computed so that no range a user or a tensor can
// give (subnormal width, a width past the largest double, NaN) yields an index outside the bins.
// The bin is found as a double, rejected when NaN and clamped to [0, bins - 1] before it becomes
// an integer: a double-to-integer conversion of NaN or of a value out of range is undefined.
#pragma once
#include <cmath>
#include <cstdint>
#include <optional>

namespace trialdb {

// Where x sits in [lo, hi] (lo < hi, both finite), as a fraction: 0 at lo, 1 at hi. Finite for
// every finite x, also when hi - lo overflows or is subnormal.
inline double range_fraction(double x, double lo, double hi) {
  constexpr double kHalf = 0.5;  // halving both ends keeps hi - lo finite for any finite pair
  const double width = hi - lo;
  if (std::isfinite(width)) return (x - lo) / width;
  return (x * kHalf - lo * kHalf) / (hi * kHalf - lo * kHalf);
}

// Edge i of bins equal bins over [lo, hi]: lo for i = 0, hi for i = bins.
inline double bin_edge(double lo, double hi, int64_t i, int64_t bins) {
  if (i >= bins) return hi;
  const double t = static_cast<double>(i) / static_cast<double>(bins);
  const double width = hi - lo;
  return std::isfinite(width) ? lo + width * t : lo * (1 - t) + hi * t;
}

// The bin of a value at `fraction` of the range (range_fraction), in [0, bins - 1]; none for
// NaN. Fractions below 0 or from 1 up land in the first or the last bin: the caller decides
// before whether such values count at all.
inline std::optional<int64_t> clamped_bin(double fraction, int64_t bins) {
  if (std::isnan(fraction)) return std::nullopt;
  const double b = fraction * static_cast<double>(bins);
  if (!(b > 0)) return 0;
  if (b >= static_cast<double>(bins - 1)) return bins - 1;
  return static_cast<int64_t>(b);
}

}  // namespace trialdb
