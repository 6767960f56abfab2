// Values widened to float32 (kernels/float32_widening.h) give what their own dtype gives: the
// reductions and the distribution of a float16, bfloat16, bool or integer value equal, bit for
// bit, those of its float64 copy, which no widening touches (the float64 kernels: the bucket
// counter, the reductions' float64 loop). Sizes on both sides of the widened range's ends.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "kernels/distribution.h"
#include "kernels/element_loader.h"
#include "kernels/float32_widening.h"
#include "kernels/reductions.h"
#include "tests/kernels/distribution_expect.h"

namespace trialdb {
namespace {

// The dtypes every value of which is widened, and those widened when every element is exact.
constexpr DType kWidenedDtypes[] = {DType::Float16, DType::BFloat16, DType::Bool,  DType::Int8,
                                    DType::UInt8,   DType::Int16,    DType::UInt16};
constexpr DType kCheckedDtypes[] = {DType::Int32, DType::UInt32, DType::Int64, DType::UInt64};

// n random elements of dtype's width, as raw bytes: every bit pattern, so float16 and bfloat16
// hold NaNs, infinities and subnormals; bool bytes are 0 or 1.
std::vector<uint8_t> random_bytes(DType dtype, int64_t n, std::mt19937_64* rng) {
  std::vector<uint8_t> bytes(static_cast<size_t>(n) * dtype_size(dtype));
  for (uint8_t& b : bytes) b = static_cast<uint8_t>((*rng)());
  if (dtype == DType::Bool)
    for (uint8_t& b : bytes) b &= 1;
  return bytes;
}

// n random integers of a 32- or 64-bit dtype, little-endian, in [-2^24, 2^24] (every one a float32
// exactly; non-negative for the unsigned dtypes).
std::vector<uint8_t> small_integers(DType dtype, int64_t n, std::mt19937_64* rng) {
  const size_t width = dtype_size(dtype);
  const bool is_signed = dtype == DType::Int32 || dtype == DType::Int64;
  std::uniform_int_distribution<int64_t> draw(is_signed ? -(int64_t{1} << 24) : 0, int64_t{1} << 24);
  std::vector<uint8_t> bytes(static_cast<size_t>(n) * width);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t x = draw(*rng);
    std::memcpy(bytes.data() + static_cast<size_t>(i) * width, &x, width);  // the low bytes: x's own
  }
  return bytes;
}

TensorView view(DType dtype, const void* data, int64_t n) {
  TensorView v;
  v.dtype = dtype;
  v.ndim = 1;
  v.dims[0] = v.numel = n;
  v.data = static_cast<const uint8_t*>(data);
  v.data_bytes = static_cast<size_t>(n) * dtype_size(dtype);
  return v;
}

std::vector<double> float64_copy(const TensorView& v) {
  std::vector<double> wide(static_cast<size_t>(v.numel));
  for (int64_t i = 0; i < v.numel; ++i) wide[static_cast<size_t>(i)] = element_as_double(v, i);
  return wide;
}

// Equal as doubles, NaN equal to NaN (the bits of a NaN result are not the kernels' concern).
void expect_same(double got, double want, const char* what, int i) {
  if (std::isnan(want)) EXPECT_TRUE(std::isnan(got)) << what << " " << i;
  else EXPECT_EQ(std::memcmp(&got, &want, sizeof got), 0) << what << " " << i << ": " << got << " vs " << want;
}

void expect_same(const Reductions& got, const Reductions& want) {
  for (int i = 0; i < kAllReductions; ++i) expect_same(got.v[i], want.v[i], "reduction", i);
}

void expect_same(const Distribution& got, const Distribution& want) {
  expect_same_counts(got, want);
  for (int i = 0; i < kDistributionPercentiles; ++i) expect_same(got.percentile[i], want.percentile[i], "p", i);
}

// compute_reductions and compute_reductions_and_distribution of v against those of its float64 copy.
void expect_as_float64_copy(const TensorView& v) {
  const std::vector<double> wide = float64_copy(v);
  const TensorView w = view(DType::Float64, wide.data(), v.numel);

  Reductions got_r, want_r;
  ASSERT_TRUE(compute_reductions(v, &got_r));
  ASSERT_TRUE(compute_reductions(w, &want_r));
  expect_same(got_r, want_r);

  Reductions got_both, want_both;
  Distribution got_d, want_d;
  bool got_has = false, want_has = false;
  ASSERT_TRUE(compute_reductions_and_distribution(v, &got_both, &got_has, &got_d));
  ASSERT_TRUE(compute_reductions_and_distribution(w, &want_both, &want_has, &want_d));
  EXPECT_EQ(got_has, want_has);
  if (want_has) expect_same(got_both, want_r);
  expect_same(got_d, want_d);
}

constexpr int64_t kSizes[] = {kMinWidenedElements - 1, kMinWidenedElements, 1000, 5003, 70001};

TEST(Float32Widening, ReductionsAndDistributionsEqualThoseOfTheFloat64Copy) {
  std::mt19937_64 rng(17);
  for (const DType dtype : kWidenedDtypes) {
    for (const int64_t n : kSizes) {
      SCOPED_TRACE(std::string(dtype_name(dtype)) + " x " + std::to_string(n));
      const std::vector<uint8_t> bytes = random_bytes(dtype, n, &rng);
      expect_as_float64_copy(view(dtype, bytes.data(), n));
    }
  }
}

// The wider integers: values of small integers (widened), and the same with one element that is
// not a float32 in the last block (not widened), or with every bit pattern (not widened).
TEST(Float32Widening, WiderIntegersEqualTheirFloat64CopiesWidenedOrNot) {
  std::mt19937_64 rng(19);
  TensorView out;
  for (const DType dtype : kCheckedDtypes) {
    for (const int64_t n : kSizes) {
      SCOPED_TRACE(std::string(dtype_name(dtype)) + " x " + std::to_string(n));
      std::vector<uint8_t> bytes = small_integers(dtype, n, &rng);
      const TensorView v = view(dtype, bytes.data(), n);
      EXPECT_EQ(widen_to_float32(v, &out), n >= kMinWidenedElements);
      expect_as_float64_copy(v);
      const int64_t inexact = (int64_t{1} << 24) + 1;  // the first integer a float32 cannot hold
      std::memcpy(bytes.data() + static_cast<size_t>(n - 1) * dtype_size(dtype), &inexact, dtype_size(dtype));
      EXPECT_FALSE(widen_to_float32(v, &out));
      expect_as_float64_copy(v);
      bytes = random_bytes(dtype, n, &rng);
      expect_as_float64_copy(view(dtype, bytes.data(), n));
    }
  }
}

// Floating values without NaNs (random bit patterns hold so many that percentiles of the
// rest and the key counter's NaN-free paths would go untested).
TEST(Float32Widening, FiniteFloat16AndBFloat16ValuesEqualTheirFloat64Copies) {
  std::mt19937_64 rng(23);
  std::normal_distribution<float> normal(0.0f, 0.02f);
  for (const DType dtype : {DType::Float16, DType::BFloat16}) {
    for (const int64_t n : {int64_t{300}, int64_t{4096}, int64_t{100000}}) {
      SCOPED_TRACE(std::string(dtype_name(dtype)) + " x " + std::to_string(n));
      std::vector<uint16_t> halves(static_cast<size_t>(n));
      for (uint16_t& h : halves) {
        const float x = normal(rng);
        uint32_t bits;
        std::memcpy(&bits, &x, 4);
        // bfloat16: the top half (truncated); float16: from its float32 by the float16 grid's
        // rounding, approximated by truncating to 10 mantissa bits with the exponent rebased.
        if (dtype == DType::BFloat16) {
          h = static_cast<uint16_t>(bits >> 16);
        } else {
          const int exponent = static_cast<int>((bits >> 23) & 0xFF) - 127 + 15;
          const auto sign = static_cast<uint16_t>((bits >> 16) & 0x8000);
          h = exponent <= 0 ? sign : static_cast<uint16_t>(sign | exponent << 10 | (bits >> 13 & 0x3FF));
        }
      }
      halves[1] = 0;       // a zero
      halves[2] = 0x8000;  // and a negative one
      const TensorView v = view(dtype, halves.data(), n);
      const std::vector<double> wide = float64_copy(v);
      const TensorView w = view(DType::Float64, wide.data(), n);
      Reductions got_r, want_r;
      Distribution got_d, want_d;
      bool got_has = false, want_has = false;
      ASSERT_TRUE(compute_reductions_and_distribution(v, &got_r, &got_has, &got_d));
      ASSERT_TRUE(compute_reductions_and_distribution(w, &want_r, &want_has, &want_d));
      ASSERT_TRUE(got_has && want_has);
      expect_same(got_r, want_r);
      expect_same(got_d, want_d);
      EXPECT_GT(got_d.negative, 0);
      EXPECT_GT(got_d.positive, 0);
    }
  }
}

TEST(Float32Widening, WidensOnlyExactDtypesWithinItsRange) {
  std::vector<uint8_t> bytes(static_cast<size_t>(kMinWidenedElements) * 8, 0x01);
  TensorView out;
  for (const DType dtype : kWidenedDtypes) {
    SCOPED_TRACE(dtype_name(dtype));
    EXPECT_FALSE(widen_to_float32(view(dtype, bytes.data(), kMinWidenedElements - 1), &out));
    TensorView v = view(dtype, bytes.data(), kMinWidenedElements);
    ASSERT_TRUE(widen_to_float32(v, &out));
    EXPECT_EQ(out.dtype, DType::Float32);
    EXPECT_EQ(out.numel, v.numel);
    EXPECT_EQ(out.data_bytes, static_cast<size_t>(v.numel) * 4);
    for (int64_t i = 0; i < v.numel; ++i) ASSERT_EQ(element_as_double(out, i), element_as_double(v, i)) << i;
    v.numel = v.dims[0] = kMaxWidenedElements + 1;  // only the count is looked at before the copy
    EXPECT_FALSE(widen_to_float32(v, &out));
  }
  for (const DType dtype : {DType::Float32, DType::Float64, DType::Complex64, DType::String})
    EXPECT_FALSE(widen_to_float32(view(dtype, bytes.data(), kMinWidenedElements), &out)) << dtype_name(dtype);
}

}  // namespace
}  // namespace trialdb
