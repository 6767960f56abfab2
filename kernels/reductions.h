// The 18 reductions of a raw value, computed in one pass with float64 accumulation.
//
// Semantics (docs/FORMAT.md, "Saved reductions"): min, max, mean, prod, std, variance, sum, l1,
// l2, each of x and of |x|; std and variance are population (ddof 0); l1 = sum |x| and
// l2 = sqrt(sum x^2) over all elements whatever the rank. A NaN element makes every reduction
// that sees it NaN, as in numpy. Variance uses the shifted-data form (shift = first element) for
// accuracy in one pass.
#pragma once
#include <cstdint>
#include <string_view>

#include "schema/value_blob.h"

namespace trialdb {

enum ReductionIndex : int {
  kRedMin = 0,
  kRedMax,
  kRedMean,
  kRedProd,
  kRedStd,
  kRedVariance,
  kRedSum,
  kRedL1,
  kRedL2,
  kRedCount,  // 9 plain reductions; index + kRedCount is the same reduction of |x|
};
inline constexpr int kAllReductions = 2 * kRedCount;
inline constexpr uint32_t kAllReductionsMask = (1u << kAllReductions) - 1;

struct Reductions {
  double v[kAllReductions];  // by ReductionIndex (+ kRedCount for abs)
};

// "min" .. "l2" -> index, or -1.
int reduction_index(std::string_view name);
const char* reduction_name(int index);  // index in [0, kRedCount)

// False for values with no reductions: strings, complex, empty tensors.
bool compute_reductions(const TensorView& v, Reductions* out);

// compute_reductions of a non-empty float32 value, whose pass also does the counting pass of its
// distribution (float32_key_counter.h), so that the value is read once for both. Returns
// Float32KeyCounter::count's result.
namespace distribution_kernel {
class Float32KeyCounter;
}
bool count_keys_with_reductions(const TensorView& v, Reductions* out, distribution_kernel::Float32KeyCounter* keys);

}  // namespace trialdb
