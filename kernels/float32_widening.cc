// widen_to_float32 (float32_widening.h): the copy, a loop per dtype that the compiler vectorizes,
// float16 through the processor's conversion instructions (F16C) where it has them, and the wider
// integers checked element by element.
#include "kernels/float32_widening.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "kernels/cpu_features.h"
#include "kernels/element_loader.h"
#include "kernels/thread_scratch.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

namespace trialdb {

namespace {

constexpr double kFloat32Max = std::numeric_limits<float>::max();

struct WidenedElements {
  std::vector<float> elements;
};

#if defined(__x86_64__) && defined(__GNUC__)
// float16 to float32, eight at a time; returns how many it converted.
__attribute__((target("avx,f16c"))) int64_t widen_half_f16c(const uint8_t* p, int64_t n, float* out) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(out + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 2 * i))));
  return i;
}
#endif

// A dtype a float32 holds exactly: every element copied.
template <class Loader>
bool widen(const uint8_t* p, int64_t n, float* out) {
  int64_t i = 0;
#if defined(__x86_64__) && defined(__GNUC__)
  if constexpr (std::is_same_v<Loader, LoadHalf>)
    if (cpu_has_f16c()) i = widen_half_f16c(p, n, out);
#endif
  for (; i < n; ++i) out[i] = Loader::template as<float>(p, i);
  return true;
}

// An integer dtype wider than 16 bits: copied while every element is a float32 exactly, as the
// kernels see it (the double its loader gives), which labels and indices are; false at the first
// block that holds one that is not. Blocks keep the loop free of branches, so it vectorizes.
template <class Loader>
bool narrow(const uint8_t* p, int64_t n, float* out) {
  constexpr int64_t kBlock = 256;
  for (int64_t from = 0; from < n; from += kBlock) {
    const int64_t end = std::min(n, from + kBlock);
    bool exact = true;
    for (int64_t i = from; i < end; ++i) {
      const double x = Loader::load(p, i);
      // Out of float32's range, x is not exact, and the conversion would be undefined: 0 stands in.
      const auto f = static_cast<float>(std::fabs(x) <= kFloat32Max ? x : 0.0);
      out[i] = f;
      exact &= static_cast<double>(f) == x;
    }
    if (!exact) return false;
  }
  return true;
}

}  // namespace

bool widen_to_float32(const TensorView& v, TensorView* out) {
  if (v.dtype == DType::Float32 || v.numel < kMinWidenedElements || v.numel > kMaxWidenedElements) return false;
  std::vector<float>& elements = thread_scratch<WidenedElements>().elements;
  bool widened = false;
  visit_real(v.dtype, [&](auto loader) {
    using Loader = decltype(loader);
    if constexpr (!std::is_same_v<Loader, LoadAs<float>> && !std::is_same_v<Loader, LoadAs<double>>) {
      if (elements.size() < static_cast<size_t>(v.numel)) elements.resize(static_cast<size_t>(v.numel));
      widened = Loader::kExactInFloat ? widen<Loader>(v.data, v.numel, elements.data())
                                      : narrow<Loader>(v.data, v.numel, elements.data());
    }
  });
  if (!widened) return false;
  *out = v;
  out->dtype = DType::Float32;
  out->data = reinterpret_cast<const uint8_t*>(elements.data());
  out->data_bytes = static_cast<size_t>(v.numel) * sizeof(float);
  return true;
}

}  // namespace trialdb
