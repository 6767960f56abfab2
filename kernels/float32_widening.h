// Values whose elements are all float32s exactly, as float32: float16, bfloat16, bool and the 8-
// and 16-bit integers always, the wider integers when every element is one (labels, indices,
// counts; float64 is left to its own kernels, the reference the tests hold the others to). The
// reductions and the distribution then take the float32 kernels' vector paths: the reductions'
// AVX2 loop, and the key counting inside the reductions' pass (float32_key_counter.h) where the
// other dtypes had a counting pass of their own over a 2.5 MB bucket table (bucket_counter.h).
// Every element keeps the value the kernels see (the double its dtype's loader gives), so every
// result is the one the value's own dtype gives: each reduction adds the same doubles in the same
// order, each element falls in the same bucket. tests/kernels/float32_widening_test.cc holds them
// to their float64 copies.
//
// Example:
//   TensorView wide;
//   if (widen_to_float32(v, &wide)) v = wide;  // wide.data: the thread's scratch, until its next call
#pragma once
#include <cstdint>

#include "schema/value_blob.h"

namespace trialdb {

// Below this many elements the copy costs more than the vector paths save: the key counter
// starts there too (distribution.cc).
inline constexpr int64_t kMinWidenedElements = 256;
// Above this many, the copy's room (4 bytes an element, kept by the thread for its next value)
// is not worth it: such values take their dtype's own loops.
inline constexpr int64_t kMaxWidenedElements = INT64_C(1) << 22;

// True, and *out a float32 view of v's elements, when v has [kMinWidenedElements,
// kMaxWidenedElements] elements, all float32s exactly, of a dtype other than float32 and float64.
// out->data is the calling thread's scratch: valid until the thread's next call.
bool widen_to_float32(const TensorView& v, TensorView* out);

}  // namespace trialdb
