// A chart line's points (step, value) and what is done to them before they are sent to draw:
// smoothing (TensorBoard's debiased exponential moving average) and downsampling that keeps each
// stretch's extremes, so a line of 100k steps draws as fast as one of a thousand and no spike
// disappears. Both are for drawing only: exact values are answered separately (/api/scalars/at).
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace trialdb::serve {

struct Series {
  std::vector<int64_t> steps;  // ascending
  std::vector<double> values;
};

// TensorBoard's smoothing: last = last * weight + (1 - weight) * v, divided by 1 - weight^n (the
// debiasing, so the line starts at the first value rather than near 0). Non-finite values are
// passed through and leave the average alone. weight 0 leaves the values as they are.
void smooth(std::vector<double>* values, double weight);

// At most about max_points points: for more, the steps are cut into max_points / 2 stretches of
// equal count and each keeps its smallest and largest value (in step order), its first non-finite
// one, and the line its first and last point.
Series downsample(const Series& s, size_t max_points);

}  // namespace trialdb::serve
