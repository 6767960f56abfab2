// Series transforms for drawing (series_ops.h).
#include "src/plot/series_ops.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace trialdb::plot {

namespace {
constexpr size_t kPointsPerBucket = 4;  // first, last, lowest, highest
constexpr double kSymlogDecades = 6;
}  // namespace

std::vector<double> ema_smooth(const std::vector<double>& y, double weight) {
  std::vector<double> out(y);
  if (weight <= 0) return out;
  double last = 0, weight_power = 1;  // weight^n after n finite points
  for (double& v : out) {
    if (!std::isfinite(v)) continue;
    last = last * weight + (1 - weight) * v;
    weight_power *= weight;
    v = last / (1 - weight_power);
  }
  return out;
}

std::vector<size_t> keep_extremes(const std::vector<double>& x, const std::vector<double>& y, size_t max_points) {
  const size_t n = std::min(x.size(), y.size());
  std::vector<size_t> keep;
  if (n <= max_points || max_points < kPointsPerBucket) {
    for (size_t i = 0; i < n; ++i) keep.push_back(i);
    return keep;
  }
  const size_t buckets = max_points / kPointsPerBucket;
  const double x0 = x.front(), width = (x.back() - x.front()) / static_cast<double>(buckets);
  size_t start = 0;
  for (size_t b = 0; b < buckets && start < n; ++b) {
    const double end_x = b + 1 == buckets ? std::numeric_limits<double>::infinity() : x0 + width * (b + 1);
    size_t end = start;
    while (end < n && x[end] < end_x) ++end;
    if (end == start) continue;
    size_t lowest = start, highest = start;
    for (size_t i = start; i < end; ++i) {
      if (!std::isfinite(y[i])) keep.push_back(i);  // a gap in the line stays a gap
      else if (!std::isfinite(y[lowest]) || y[i] < y[lowest]) lowest = i;
      if (std::isfinite(y[i]) && (!std::isfinite(y[highest]) || y[i] > y[highest])) highest = i;
    }
    keep.insert(keep.end(), {start, lowest, highest, end - 1});
    start = end;
  }
  std::sort(keep.begin(), keep.end());
  keep.erase(std::unique(keep.begin(), keep.end()), keep.end());
  return keep;
}

double symlog_threshold(const std::vector<std::vector<double>>& series) {
  double smallest = std::numeric_limits<double>::infinity(), largest = 0;
  for (const std::vector<double>& s : series)
    for (double v : s)
      if (std::isfinite(v) && v != 0) {
        smallest = std::min(smallest, std::abs(v));
        largest = std::max(largest, std::abs(v));
      }
  if (!std::isfinite(smallest)) return 1;
  const double floor_decade = std::floor(std::log10(largest)) - kSymlogDecades;
  return std::pow(10.0, std::max(std::floor(std::log10(smallest)), floor_decade));
}

}  // namespace trialdb::plot
