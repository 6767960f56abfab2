// series.h
#include "src/serve/series.h"

#include "src/plot/series_ops.h"

#include <algorithm>
#include <cmath>

namespace trialdb::serve {

void smooth(std::vector<double>* values, double weight) { *values = plot::ema_smooth(*values, weight); }

Series downsample(const Series& s, size_t max_points) {
  const size_t n = s.steps.size();
  if (n <= max_points || max_points < 4) return s;
  const size_t stretches = max_points / 2;
  std::vector<size_t> keep = {0};
  for (size_t b = 0; b < stretches; ++b) {
    const size_t from = b * n / stretches, to = (b + 1) * n / stretches;
    size_t lo = n, hi = n, odd = n;
    for (size_t i = from; i < to; ++i) {
      const double v = s.values[i];
      if (!std::isfinite(v)) {
        if (odd == n) odd = i;
        continue;
      }
      if (lo == n || v < s.values[lo]) lo = i;
      if (hi == n || v > s.values[hi]) hi = i;
    }
    for (size_t i : {lo, hi, odd})
      if (i != n) keep.push_back(i);
  }
  keep.push_back(n - 1);
  std::sort(keep.begin(), keep.end());
  keep.erase(std::unique(keep.begin(), keep.end()), keep.end());
  Series out;
  for (size_t i : keep) {
    out.steps.push_back(s.steps[i]);
    out.values.push_back(s.values[i]);
  }
  return out;
}

}  // namespace trialdb::serve
