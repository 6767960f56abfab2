// The distribution kernel (schema/distribution.h), the bucket grid (bucket_grid.h) and the
// bucket runs' text (bucket_runs.h). Exactness against numpy over real trials is checked by
// tests/ingest/pipeline/distributions_test.py; here the edge cases, with numpy's answers written
// out.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "schema/bucket_grid.h"
#include "schema/bucket_runs.h"
#include "schema/distribution.h"

namespace trialdb {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

TensorView view_of(const std::vector<double>& x) {
  TensorView v;
  v.dtype = DType::Float64;
  v.ndim = 1;
  v.dims[0] = v.numel = static_cast<int64_t>(x.size());
  v.data = reinterpret_cast<const uint8_t*>(x.data());
  v.data_bytes = x.size() * sizeof(double);
  return v;
}

TEST(BucketGrid, EveryFiniteValueIsInsideItsBucketAndBucketsAreNarrow) {
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<uint64_t> bits;
  for (int i = 0; i < 200000; ++i) {
    const double x = bits_double(bits(rng));
    if (!std::isfinite(x)) continue;
    const int64_t k = bucket_of(x);
    const double lo = bucket_lo(k), hi = bucket_hi(k);
    const bool inside = x > 0 ? (lo < x && x <= hi) : x < 0 ? (lo <= x && x < hi) : k == 0;
    EXPECT_TRUE(inside) << x;
    const bool narrow = std::fabs(x) < 0x1p-1022 || !std::isfinite(hi) || !std::isfinite(lo) || k == 0 ||
                        (hi - lo) / std::min(std::fabs(lo), std::fabs(hi)) <= 0x1p-7;
    EXPECT_TRUE(narrow) << x;
  }
  // Edges are exact: a power of two is the top of the bucket below it.
  EXPECT_EQ(bucket_hi(bucket_of(1.0)), 1.0);
  EXPECT_EQ(bucket_lo(bucket_of(1.0)), 1.0 - 1.0 / 256);
  EXPECT_EQ(bucket_lo(bucket_of(-1.0)), -1.0);
  EXPECT_EQ(bucket_of(-0.0), 0);
  EXPECT_EQ(bucket_hi(kMaxBucket), kInf);
  EXPECT_EQ(bucket_of(std::numeric_limits<double>::max()), kMaxBucket);
}

TEST(BucketRuns, RoundTripsAndBreaksRunsAtGapsAndOctaves) {
  BucketRunWriter w;
  const int64_t one = bucket_of(1.5);   // inside an octave
  // kMaxRunGap empty buckets stay in a run, one more starts a new one.
  const int64_t far = one + 2 + 1 + kMaxRunGap + 1;
  const std::vector<std::pair<int64_t, uint64_t>> buckets = {
      {-5, 2}, {0, 7}, {one, 1}, {one + 2, 3}, {one + 2 + 1 + kMaxRunGap, 4}, {far + kMaxRunGap + 1, 5}};
  for (const auto& [b, c] : buckets) w.add(b, c);
  const std::string text = w.finish();
  EXPECT_EQ(text, "{\"-5\":[2],\"0\":[7],\"" + std::to_string(one) + "\":[1,0,3,0,0,0,0,4],\"" +
                      std::to_string(far + kMaxRunGap + 1) + "\":[5]}");
  std::vector<std::pair<int64_t, uint64_t>> back;
  ASSERT_TRUE(decode_bucket_runs(text, &back));
  EXPECT_EQ(back, buckets);
  // Consecutive buckets across an octave boundary start a new run.
  const int64_t top = bucket_of(1.0);   // the last bucket of its octave
  w.add(top, 1);
  w.add(top + 1, 1);
  EXPECT_EQ(w.finish(), "{\"" + std::to_string(top) + "\":[1],\"" + std::to_string(top + 1) + "\":[1]}");
  EXPECT_EQ(w.finish(), "{}");
  for (const char* bad : {"", "{", "{\"1\":[}", "{\"2\":[1],\"1\":[1]}", "{\"x\":[1]}", "{}x"})
    EXPECT_FALSE(decode_bucket_runs(bad, &back)) << bad;
}

TEST(Distribution, CountsAndNumpysPercentilesWithSpecialValues) {
  // numpy.nanpercentile([3, -1, 0, NaN, 2, -0.0, inf, 5, -2], p) for the 11 p.
  const std::vector<double> x = {3, -1, 0, kNaN, 2, -0.0, kInf, 5, -2};
  Distribution d;
  ASSERT_TRUE(compute_distribution(view_of(x), &d));
  EXPECT_EQ(d.count(), 9);
  EXPECT_EQ(d.nan, 1);
  EXPECT_EQ(d.pos_inf, 1);
  EXPECT_EQ(d.neg_inf, 0);
  EXPECT_EQ(d.zero, 2);
  EXPECT_EQ(d.negative, 2);
  EXPECT_EQ(d.positive, 3);
  // sorted non-NaN: -2 -1 0 0 2 3 5 inf (m = 8)
  const double want[kDistributionPercentiles] = {-2, -1.93, -1.65, -1.3, -0.25, 1, 3.5, 5 + (kInf - 5) * 0.3, kNaN,
                                                 kNaN, kNaN};
  for (int i = 0; i < kDistributionPercentiles; ++i) {
    if (std::isnan(want[i]) || std::isinf(want[i])) {
      EXPECT_TRUE(std::isnan(d.percentile[i]) || d.percentile[i] == want[i]) << i;
    } else {
      EXPECT_NEAR(d.percentile[i], want[i], 1e-12) << i;
    }
  }
  std::vector<std::pair<int64_t, uint64_t>> buckets;
  ASSERT_TRUE(decode_bucket_runs(d.histogram, &buckets));
  uint64_t finite = 0;
  for (const auto& [b, c] : buckets) finite += c;
  EXPECT_EQ(finite, 7u);   // the infinity and the NaN are in no bucket
}

TEST(Distribution, EmptyAllNanAndNonNumericValues) {
  Distribution d;
  ASSERT_TRUE(compute_distribution(view_of({}), &d));
  EXPECT_EQ(d.count(), 0);
  EXPECT_TRUE(std::isnan(d.percentile[5]));
  EXPECT_EQ(d.histogram, "{}");
  ASSERT_TRUE(compute_distribution(view_of({kNaN, kNaN}), &d));
  EXPECT_EQ(d.nan, 2);
  EXPECT_TRUE(std::isnan(d.percentile[0]));
  TensorView s;
  s.dtype = DType::String;
  EXPECT_FALSE(compute_distribution(s, &d));
}

TEST(Distribution, ManyPercentilesTakeSeveralSelectionPassesAndStayExact) {
  std::mt19937_64 rng(3);
  std::normal_distribution<double> g;
  std::vector<double> x(20000);
  for (double& e : x) e = g(rng);
  std::vector<double> sorted = x;
  std::sort(sorted.begin(), sorted.end());
  std::vector<double> ps, out(301);
  for (int i = 0; i <= 300; ++i) ps.push_back(i / 3.0);
  ASSERT_EQ(compute_percentiles(view_of(x), ps.data(), ps.size(), out.data()), 0);
  for (size_t i = 0; i < ps.size(); ++i) {
    const double v = (sorted.size() - 1) * (ps[i] / 100);
    const size_t lo = static_cast<size_t>(std::floor(v));
    const double a = sorted[lo], b = sorted[std::min(lo + 1, sorted.size() - 1)], t = v - std::floor(v);
    EXPECT_EQ(out[i], t >= 0.5 ? b - (b - a) * (1 - t) : a + (b - a) * t) << ps[i];
  }
}

}  // namespace
}  // namespace trialdb
