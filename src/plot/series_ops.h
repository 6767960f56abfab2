// What a chart does to a series before drawing it, apart from any drawing:
//   ema_smooth            TensorBoard's smoothing: an exponential moving average, debiased so
//                         the first points are not pulled toward zero; NaN/Inf points stay as
//                         they are and do not enter the average
//   keep_extremes         at most max_points points for drawing: the x range cut into buckets,
//                         each keeping its first, last, lowest and highest point, so a spike never
//                         disappears from a long series
//   symlog_threshold      where a symmetric log axis turns linear around zero
#pragma once
#include <cstddef>
#include <vector>

namespace trialdb::plot {

// weight in [0, 1): 0 leaves the series as it is; TensorBoard's slider goes to 0.999.
std::vector<double> ema_smooth(const std::vector<double>& y, double weight);

// Indices of the points to draw, ascending (all of them when there are at most max_points).
std::vector<size_t> keep_extremes(const std::vector<double>& x, const std::vector<double>& y, size_t max_points);

// A power of ten at or below the smallest non-zero |y|, but no more than 6 decades below the
// largest, so a symlog axis shows the small values without spending its height on decades
// nothing lies in.
double symlog_threshold(const std::vector<std::vector<double>>& series);

}  // namespace trialdb::plot
