// The order in which the reduction kernels add up elements, defined once: four lanes, lane l
// taking elements 4k + l of the whole blocks of four and lane 0 the tail, then the lanes summed
// as (l0 + l1) + (l2 + l3). compute_reductions (its portable loop here, its AVX2 loop register
// lane by register lane) and reduce_one both add in this order, so a sum reduce_one computes
// alone is bit for bit the one compute_reductions computes with the other seventeen. Four lanes
// also keep each loop from being one long dependency chain.
#pragma once
#include <cstdint>

namespace trialdb::reduction_lanes {

inline constexpr int kLanes = 4;

// add(lane, element) for elements [start, n), read by a loader of element_loader.h, in lane
// order; start is where a vector loop left off (a multiple of kLanes), 0 without one.
template <class Loader, class Add>
inline void for_each(const uint8_t* p, int64_t n, Add add, int64_t start = 0) {
  int64_t i = start;
  for (; i + kLanes <= n; i += kLanes)
    for (int l = 0; l < kLanes; ++l) add(l, Loader::load(p, i + l));
  for (; i < n; ++i) add(0, Loader::load(p, i));
}

inline double total(const double (&lanes)[kLanes]) { return (lanes[0] + lanes[1]) + (lanes[2] + lanes[3]); }

// The population variance of n elements from the sums of d = x - shift and of d * d (the
// shifted-data form); rounding below zero is zero.
inline double shifted_variance(double d, double dd, double n) {
  const double var = (dd - d * d / n) / n;
  return var < 0 ? 0 : var;
}

}  // namespace trialdb::reduction_lanes
