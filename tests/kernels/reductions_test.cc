// Unit tests of the reductions kernel: hand-computed values, accuracy for large offsets, NaN, integers and bools.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "kernels/reductions.h"
#include "schema/value_blob.h"

using namespace trialdb;

namespace {
Reductions reduce(DType t, const void* data, int64_t n) {
  TensorView v;
  v.dtype = t;
  v.ndim = 1;
  v.dims[0] = n;
  v.numel = n;
  v.data = static_cast<const uint8_t*>(data);
  Reductions r;
  EXPECT_TRUE(compute_reductions(v, &r));
  return r;
}
}  // namespace

TEST(Reductions, HandComputed) {
  double x[4] = {1, -2, 3, -4};
  Reductions r = reduce(DType::Float64, x, 4);
  EXPECT_DOUBLE_EQ(r.v[kRedMin], -4);
  EXPECT_DOUBLE_EQ(r.v[kRedMax], 3);
  EXPECT_DOUBLE_EQ(r.v[kRedSum], -2);
  EXPECT_DOUBLE_EQ(r.v[kRedMean], -0.5);
  EXPECT_DOUBLE_EQ(r.v[kRedProd], 24);
  EXPECT_DOUBLE_EQ(r.v[kRedVariance], 7.25);  // population: E[x^2] - mean^2 = 7.5 - 0.25
  EXPECT_DOUBLE_EQ(r.v[kRedStd], std::sqrt(7.25));
  EXPECT_DOUBLE_EQ(r.v[kRedL1], 10);
  EXPECT_DOUBLE_EQ(r.v[kRedL2], std::sqrt(30.0));
  EXPECT_DOUBLE_EQ(r.v[kRedCount + kRedMin], 1);
  EXPECT_DOUBLE_EQ(r.v[kRedCount + kRedMax], 4);
  EXPECT_DOUBLE_EQ(r.v[kRedCount + kRedMean], 2.5);
  EXPECT_DOUBLE_EQ(r.v[kRedCount + kRedVariance], 1.25);
  EXPECT_DOUBLE_EQ(r.v[kRedCount + kRedSum], 10);
  EXPECT_DOUBLE_EQ(r.v[kRedCount + kRedL2], std::sqrt(30.0));
}

TEST(Reductions, ShiftedVarianceIsAccurateForLargeOffsets) {
  std::vector<double> x;
  for (int i = 0; i < 1000; ++i) x.push_back(1e9 + (i % 2 ? 1.0 : -1.0));
  Reductions r = reduce(DType::Float64, x.data(), 1000);
  EXPECT_NEAR(r.v[kRedVariance], 1.0, 1e-9);
}

TEST(Reductions, NaNPropagatesAndIntegersAndBools) {
  float x[3] = {1, NAN, 2};
  Reductions r = reduce(DType::Float32, x, 3);
  EXPECT_TRUE(std::isnan(r.v[kRedMin]));
  EXPECT_TRUE(std::isnan(r.v[kRedMean]));
  uint8_t u[3] = {255, 1, 0};
  r = reduce(DType::UInt8, u, 3);
  EXPECT_DOUBLE_EQ(r.v[kRedSum], 256);
  int8_t s[2] = {-128, 127};
  r = reduce(DType::Int8, s, 2);
  EXPECT_DOUBLE_EQ(r.v[kRedMin], -128);
  uint8_t b[3] = {1, 1, 0};
  r = reduce(DType::Bool, b, 3);
  EXPECT_NEAR(r.v[kRedMean], 2.0 / 3, 1e-15);
  TensorView empty;
  empty.dtype = DType::Float32;
  empty.numel = 0;
  Reductions unused;
  EXPECT_FALSE(compute_reductions(empty, &unused));
}
