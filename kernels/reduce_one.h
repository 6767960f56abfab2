// One reduction of a tensor, fast: what the SQL functions (tensor_mean, tensor_l2, ...) use.
//
// compute_reductions (reductions.h) computes all 18 reductions in one pass, which is what the
// ingest wants but wastes ~15 accumulators when a query asks for one. reduce_one computes just
// the requested reduction, adding in the same lane order (reduction_lanes.h), so finite answers
// are bit-identical to compute_reductions'; results that come out non-finite (NaN or Inf
// elements, overflow) are recomputed by compute_reductions itself so its NaN/Inf rules hold
// exactly.
#pragma once
#include "kernels/reductions.h"
#include "schema/value_blob.h"

namespace trialdb {

// index: a ReductionIndex, plus kRedCount for the |x| variant. False when the tensor has no
// reductions (strings, complex, empty).
bool reduce_one(const TensorView& v, int index, double* out);

}  // namespace trialdb
