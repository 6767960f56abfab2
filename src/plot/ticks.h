// Axis ticks: where to put them and how to label them so that a person can read the numbers.
//
// Linear axes get "nice" steps (1, 2 or 5 times a power of ten); log axes get decades (or every
// k-th decade, or 1-2-5 within a short range). Labels use the fewest digits that tell
// neighbouring ticks apart, and exponents only for very large or very small numbers.
#pragma once
#include <string>
#include <vector>

namespace trialdb::plot {

struct Tick {
  double value;
  std::string label;
};

// About max_ticks ticks inside [lo, hi] (lo < hi). integer: steps are whole numbers (steps axis).
std::vector<Tick> linear_ticks(double lo, double hi, int max_ticks, bool integer = false);

// Ticks for a log10 axis over [lo, hi], 0 < lo < hi.
std::vector<Tick> log_ticks(double lo, double hi, int max_ticks);

// Ticks for a symmetric log axis over [lo, hi]: 0 and +-linthresh * 10^k, every k-th decade
// when they would be more than max_ticks.
std::vector<Tick> symlog_ticks(double lo, double hi, double linthresh, int max_ticks);

// A number as a short label: format_number(0.00002) == "2e-5", format_number(1500) == "1500".
// significant: digits kept (%g precision).
std::string format_number(double v, int significant = 4);

// The range [lo, hi] widened by frac of its length on both sides (and made non-empty).
void pad_range(double* lo, double* hi, double frac, bool log);

}  // namespace trialdb::plot
