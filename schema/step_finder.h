// StepFinder: where a value row's global step is among a trial's visible steps, looked up in
// memory by the reads that bypass the value views (chart lines, info --tensors) instead of the
// views' join of the step row for every value.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace trialdb {

// Finds global steps in the trial's steps, sorted. A tensor's rows come in step order, so the
// next step is looked for from the last one found first.
class StepFinder {
 public:
  explicit StepFinder(const std::vector<int64_t>& steps) : steps_(steps) {}
  // The index of `step`, or steps.size() when it is not a (complete) step of the trial.
  size_t find(int64_t step) {
    const size_t n = steps_.size();
    if (at_ < n && steps_[at_] == step) return at_;            // another worker of the step
    if (at_ + 1 < n && steps_[at_ + 1] == step) return ++at_;  // the next step
    const auto it = std::lower_bound(steps_.begin(), steps_.end(), step);
    if (it == steps_.end() || *it != step) return n;
    return at_ = static_cast<size_t>(it - steps_.begin());
  }

 private:
  const std::vector<int64_t>& steps_;
  size_t at_ = 0;
};

}  // namespace trialdb
