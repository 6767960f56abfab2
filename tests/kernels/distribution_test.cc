// The distribution kernel (kernels/distribution.h), the bucket grid (bucket_grid.h) and the
// bucket runs (bucket_runs.h). Exactness against numpy over real trials is checked by
// tests/ingest/pipeline/distributions_test.py; here the edge cases, with numpy's answers written
// out.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <random>
#include <thread>
#include <type_traits>
#include <vector>

#include "kernels/bucket_counter.h"
#include "kernels/bucket_grid.h"
#include "kernels/bucket_runs.h"
#include "kernels/distribution.h"
#include "tests/kernels/distribution_expect.h"

namespace trialdb {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// A one-dimensional float32 or float64 view of x.
template <class T>
TensorView view_of(const std::vector<T>& x) {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>);
  TensorView v;
  v.dtype = std::is_same_v<T, float> ? DType::Float32 : DType::Float64;
  v.ndim = 1;
  v.dims[0] = v.numel = static_cast<int64_t>(x.size());
  v.data = reinterpret_cast<const uint8_t*>(x.data());
  v.data_bytes = x.size() * sizeof(T);
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

// The histogram's JSON text (the `histograms` view's) shows where runs break.
std::string json_of(const std::string& blob) {
  std::string text;
  EXPECT_TRUE(histogram_blob_json(blob, &text).is_ok());
  return text;
}

TEST(BucketRuns, RoundTripsAndBreaksRunsAtGapsAndOctaves) {
  BucketRunWriter w;
  const int64_t one = bucket_of(1.5);  // inside an octave
  // kMaxRunGap empty buckets stay in a run, one more starts a new one.
  const int64_t far = one + 2 + 1 + kMaxRunGap + 1;
  const std::vector<std::pair<int64_t, uint64_t>> buckets = {
      {-5, 2}, {0, 7}, {one, 1}, {one + 2, 3}, {one + 2 + 1 + kMaxRunGap, 4}, {far + kMaxRunGap + 1, 5}};
  for (const auto& [b, c] : buckets) w.add(b, c);
  const std::string blob = w.finish();
  EXPECT_EQ(json_of(blob), "{\"-5\":[2],\"0\":[7],\"" + std::to_string(one) + "\":[1,0,3,0,0,0,0,4],\"" +
                               std::to_string(far + kMaxRunGap + 1) + "\":[5]}");
  std::vector<std::pair<int64_t, uint64_t>> back;
  ASSERT_TRUE(decode_histogram_blob(blob, &back).is_ok());
  EXPECT_EQ(back, buckets);
  // Consecutive buckets across an octave boundary start a new run.
  const int64_t top = bucket_of(1.0);  // the last bucket of its octave
  w.add(top, 1);
  w.add(top + 1, 1);
  EXPECT_EQ(json_of(w.finish()), "{\"" + std::to_string(top) + "\":[1],\"" + std::to_string(top + 1) + "\":[1]}");
  EXPECT_EQ(json_of(w.finish()), "{}");
}

// Many runs, of the widest pieces one add writes (a gap of kMaxRunGap zeros, the largest bucket
// numbers and counts), twice on one writer.
TEST(BucketRuns, LongHistogramsOfTheLongestPiecesRoundTrip) {
  BucketRunWriter w;
  std::vector<std::pair<int64_t, uint64_t>> buckets;
  for (int64_t b = -kMaxBucket; b + 20 <= kMaxBucket; b += kMaxBucket / 3000 + 1)
    for (int64_t i = 0; i < 20; i += 1 + kMaxRunGap) buckets.emplace_back(b + i, UINT64_MAX - static_cast<uint64_t>(i));
  for (int round = 0; round < 2; ++round) {
    for (const auto& [b, c] : buckets) w.add(b, c);
    const std::string blob = w.finish();
    std::vector<std::pair<int64_t, uint64_t>> back;
    ASSERT_TRUE(decode_histogram_blob(blob, &back).is_ok()) << round;
    EXPECT_EQ(back, buckets) << round;
  }
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
  const double want[kDistributionPercentiles] = {-2,   -1.93, -1.65, -1.3, -0.25, 1, 3.5, 5 + (kInf - 5) * 0.3,
                                                 kNaN, kNaN,  kNaN};
  for (int i = 0; i < kDistributionPercentiles; ++i) {
    if (std::isnan(want[i]) || std::isinf(want[i])) {
      EXPECT_TRUE(std::isnan(d.percentile[i]) || d.percentile[i] == want[i]) << i;
    } else {
      EXPECT_NEAR(d.percentile[i], want[i], 1e-12) << i;
    }
  }
  std::vector<std::pair<int64_t, uint64_t>> buckets;
  ASSERT_TRUE(decode_histogram_blob(d.histogram, &buckets).is_ok());
  uint64_t finite = 0;
  for (const auto& [b, c] : buckets) finite += c;
  EXPECT_EQ(finite, 7u);  // the infinity and the NaN are in no bucket
}

TEST(Distribution, EmptyAllNanAndNonNumericValues) {
  Distribution d;
  ASSERT_TRUE(compute_distribution(view_of(std::vector<double>{}), &d));
  EXPECT_EQ(d.count(), 0);
  EXPECT_TRUE(std::isnan(d.percentile[5]));
  EXPECT_EQ(json_of(d.histogram), "{}");
  ASSERT_TRUE(compute_distribution(view_of(std::vector<double>{kNaN, kNaN}), &d));
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

// Large float32 values are counted on the keys of their bits (kernels/float32_key_counter.h,
// Float32KeyCounter), the rest on the buckets of their elements as float64: the same elements as
// float32 and as float64 must give the same distribution, field for field, and the percentiles
// must be numpy's over the sorted elements.
std::vector<float> float32_from_bits(const std::vector<uint32_t>& bits) {
  std::vector<float> x(bits.size());
  std::memcpy(x.data(), bits.data(), bits.size() * 4);
  return x;
}

void expect_float32_distribution_exact(const std::vector<float>& x, const char* what) {
  SCOPED_TRACE(what);
  Distribution f32, f64;
  ASSERT_TRUE(compute_distribution(view_of(x), &f32));
  ASSERT_TRUE(compute_distribution(view_of(std::vector<double>(x.begin(), x.end())), &f64));
  expect_same_counts(f32, f64);
  // The ingest's form, counting in the reductions' pass: the same distribution, and the same
  // reductions bit for bit.
  Distribution fused;
  Reductions fused_reductions, reductions;
  bool has_reductions = false;
  ASSERT_TRUE(compute_reductions_and_distribution(view_of(x), &fused_reductions, &has_reductions, &fused));
  ASSERT_TRUE(has_reductions);
  ASSERT_TRUE(compute_reductions(view_of(x), &reductions));
  EXPECT_EQ(std::memcmp(fused_reductions.v, reductions.v, sizeof reductions.v), 0);
  expect_same_counts(fused, f32);
  for (int i = 0; i < kDistributionPercentiles; ++i)
    EXPECT_EQ(std::memcmp(&fused.percentile[i], &f32.percentile[i], sizeof(double)), 0) << kDistributionPercents[i];
  // Counts and buckets from the elements themselves.
  std::vector<double> sorted;
  int64_t nan = 0, zero = 0, negative = 0, positive = 0;
  std::map<int64_t, uint64_t> buckets;
  for (const float e : x) {
    if (std::isnan(e)) {
      ++nan;
      continue;
    }
    sorted.push_back(e);
    if (std::isinf(e)) continue;
    ++buckets[bucket_of(e)];
    zero += e == 0;
    negative += e < 0;
    positive += e > 0;
  }
  EXPECT_EQ(f32.nan, nan);
  EXPECT_EQ(f32.zero, zero);
  EXPECT_EQ(f32.negative, negative);
  EXPECT_EQ(f32.positive, positive);
  std::vector<std::pair<int64_t, uint64_t>> runs;
  ASSERT_TRUE(decode_histogram_blob(f32.histogram, &runs).is_ok());
  const std::vector<std::pair<int64_t, uint64_t>> want_runs(buckets.begin(), buckets.end());
  EXPECT_EQ(runs, want_runs);
  std::sort(sorted.begin(), sorted.end());
  for (int i = 0; i < kDistributionPercentiles; ++i) {
    const double p = kDistributionPercents[i];
    if (sorted.empty()) {
      EXPECT_TRUE(std::isnan(f32.percentile[i]));
      continue;
    }
    const double vi = static_cast<double>(sorted.size() - 1) * (p / 100);
    const size_t lo = static_cast<size_t>(std::floor(vi));
    const double a = sorted[lo], b = sorted[std::min(lo + 1, sorted.size() - 1)], t = vi - std::floor(vi);
    const double want = t >= 0.5 ? b - (b - a) * (1 - t) : a + (b - a) * t;
    if (std::isnan(want)) EXPECT_TRUE(std::isnan(f32.percentile[i])) << p;
    else EXPECT_EQ(f32.percentile[i], want) << p;
    if (std::isnan(f64.percentile[i])) EXPECT_TRUE(std::isnan(f32.percentile[i])) << p;
    else EXPECT_EQ(f32.percentile[i], f64.percentile[i]) << p;
  }
}

constexpr size_t kLargeFloat32 = size_t{1} << 19;  // counted on keys, also in a pass of their own
// Counted on keys in the reductions' pass only (compute_distribution counts them by bucket): the
// fused form is checked against the bucket counter, on a range of keys the pass found.
constexpr size_t kMidFloat32 = 4800;
constexpr size_t kFloat32Sizes[] = {kLargeFloat32, kMidFloat32};

std::vector<uint32_t> random_normal_float32_bits(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> g(0.0f, 0.02f);
  std::vector<uint32_t> bits(n);
  for (uint32_t& b : bits) {
    const float e = g(rng);
    std::memcpy(&b, &e, 4);
  }
  return bits;
}

TEST(Distribution, LargeFloat32ValuesEqualTheirFloat64Copies) {
  for (const size_t kLargeFloat32 : kFloat32Sizes) {
    SCOPED_TRACE(kLargeFloat32);
    std::vector<uint32_t> bits = random_normal_float32_bits(kLargeFloat32, 11);
    expect_float32_distribution_exact(float32_from_bits(bits), "normal");
    // A length the four-wide loops do not divide, whose extremes are in the tail.
    std::vector<float> tail = float32_from_bits(random_normal_float32_bits(kLargeFloat32 + 3, 13));
    tail[kLargeFloat32 + 1] = -1.0f;
    tail[kLargeFloat32 + 2] = 2.0f;
    expect_float32_distribution_exact(tail, "extremes in the tail");
    // A ReLU output: half +0.0, some -0.0, and elements on bucket edges (a bucket holds its upper
    // edge: 1.0 is in the bucket below 1.0's key), among them powers of two.
    for (size_t i = 0; i < bits.size(); ++i) {
      if (i % 2) bits[i] = 0;
      if (i % 7 == 0) bits[i] = 0x80000000u;
      if (i % 11 == 0) bits[i] &= 0xFFFF0000u;
      if (i % 13 == 0) bits[i] = 0x3F800000u + (static_cast<uint32_t>(i) % 3) * 0x10000u;  // 1.0, 1.0078125, ...
    }
    expect_float32_distribution_exact(float32_from_bits(bits), "zeros and edges");
    // NaNs of every payload class: the top 16 bits of Inf's with a payload, the largest payloads of
    // either sign (the positive one's key is next to -0.0's), the default quiet NaNs.
    for (const uint32_t nan :
         {0x7F800001u, 0xFF800001u, 0x7FFFFFFFu, 0x7FFF0001u, 0x7FC00000u, 0xFFC00000u, 0xFFFF0000u, 0xFFFFFFFFu}) {
      std::vector<uint32_t> with = bits;
      for (size_t i = 3; i < with.size(); i += 5) with[i] = nan;
      with[1] = 0x80000000u;  // -0.0 beside them
      expect_float32_distribution_exact(float32_from_bits(with), "NaN payload");
    }
  }
}

// A selection wanting few buckets compares keys (Float32KeyCounter::list_wanted_keys), one
// wanting many looks each key up: both exact, every count of wanted buckets in between.
TEST(Distribution, LargeFloat32ValuesFewAndManyWantedBuckets) {
  const std::vector<float> x = float32_from_bits(random_normal_float32_bits(kLargeFloat32, 14));
  std::vector<double> sorted(x.begin(), x.end());
  std::sort(sorted.begin(), sorted.end());
  for (const int count : {1, 3, 4, 5, 8, 9, 12, 13, 40, 301}) {
    std::vector<double> ps, out(count);
    for (int i = 0; i < count; ++i) ps.push_back(count == 1 ? 37.5 : 100.0 * i / (count - 1));
    ASSERT_EQ(compute_percentiles(view_of(x), ps.data(), ps.size(), out.data()), 0);
    for (int i = 0; i < count; ++i) {
      const double v = (sorted.size() - 1) * (ps[i] / 100);
      const size_t lo = static_cast<size_t>(std::floor(v));
      const double a = sorted[lo], b = sorted[std::min(lo + 1, sorted.size() - 1)], t = v - std::floor(v);
      EXPECT_EQ(out[i], t >= 0.5 ? b - (b - a) * (1 - t) : a + (b - a) * t) << count << " percentiles, p" << ps[i];
    }
  }
}

// The gathering pass compares sixteen keys at a time (packed to 16 bits), then a group of eight,
// then one at a time: values whose every bucket is a wanted one, their elements all different, put
// hits in every lane of both packed groups and of both tails, each of which must be listed at its
// own offset.
TEST(Distribution, GatheringListsHitsInEveryLaneAndTail) {
  for (const size_t n : {kMidFloat32, kMidFloat32 + 8, kMidFloat32 + 13, kMidFloat32 + 16 + 15}) {
    SCOPED_TRACE(n);
    std::vector<float> x(n);
    for (size_t i = 0; i < n; ++i) {
      // Magnitudes in [1, 1 + 6/128): six buckets a sign, elements spread over them out of order.
      const float m = 1.0f + static_cast<float>((i * 7919) % n) / static_cast<float>(n) * (6.0f / 128);
      x[i] = i % 3 ? m : -m;
    }
    expect_float32_distribution_exact(x, "every bucket wanted");
  }
}

TEST(Distribution, LargeFloat32ValuesWithSubnormalsInfinitiesAndHugeValues) {
  for (const size_t kLargeFloat32 : kFloat32Sizes) {
    SCOPED_TRACE(kLargeFloat32);
    const std::vector<uint32_t> base = random_normal_float32_bits(kLargeFloat32, 12);
    // Elements whose keys are shared with something else: subnormals (and the smallest normal),
    // the infinities and the finite values just below them, alone and mixed.
    for (const uint32_t odd :
         {0x00000001u, 0x807FFFFFu, 0x00800000u, 0x00010000u, 0x7F800000u, 0xFF800000u, 0x7F7FFFFFu, 0xFF7F0001u}) {
      std::vector<uint32_t> bits = base;
      for (size_t i = 0; i < bits.size(); i += 1000) bits[i] = odd;
      expect_float32_distribution_exact(float32_from_bits(bits), "one kind");
      bits[500] = 0x7F800000u;
      bits[501] = 0x00000005u;
      expect_float32_distribution_exact(float32_from_bits(bits), "mixed");
    }
  }
}

TEST(Distribution, LargeFloat32ValuesAllEqualOrInOneBucket) {
  for (const size_t kLargeFloat32 : kFloat32Sizes) {
    SCOPED_TRACE(kLargeFloat32);
    expect_float32_distribution_exact(std::vector<float>(kLargeFloat32, 0.25f), "all equal");
    expect_float32_distribution_exact(std::vector<float>(kLargeFloat32, -0.0f), "all -0.0");
    std::vector<uint32_t> bits(kLargeFloat32);
    for (size_t i = 0; i < bits.size(); ++i) bits[i] = 0x40490001u + static_cast<uint32_t>((i * 7919) % 0xFFFF);
    expect_float32_distribution_exact(float32_from_bits(bits), "every order statistic in one bucket");
    for (uint32_t& b : bits) b |= 0x80000000u;
    expect_float32_distribution_exact(float32_from_bits(bits), "the same, negative");
    std::vector<float> mixed(kLargeFloat32 + 1, 0.0f);  // zeros but one (in the tail) of each sign
    mixed[kLargeFloat32] = -3.5f;
    mixed[kLargeFloat32 / 2] = 1e-30f;
    expect_float32_distribution_exact(mixed, "zeros and two others");
  }
}

// The key counter writes its histogram's runs straight from its tables
// (Float32KeyCounter::take_histogram) and finds the percentiles' buckets on the way; the other
// counters list their buckets for BucketRunWriter. Both must break runs alike: after kMaxRunGap
// empty buckets and one more, at an octave's last bucket, for every count width, on both signs;
// and the ranks fall in the zeros, in buckets of many elements, in the first and last ones.
TEST(Distribution, KeyCountedHistogramsBreakRunsWhereBucketRunsDo) {
  constexpr uint32_t kOctaveTop = 0x3F80;  // 1.0's magnitude key: the last bucket of its octave
  // (magnitude key offset from kOctaveTop, elements in its bucket)
  using Buckets = std::vector<std::pair<int, int>>;
  const Buckets around_an_octave_edge = {{-20, 1},  {-15, 3},   // a gap of kMaxRunGap: one run
                                         {-9, 15},  {-8, 1},    // a gap of kMaxRunGap + 1: a new run
                                         {-1, 255}, {0, 1},     // up to the octave's last bucket
                                         {1, 256},  {2, 2},     // the next octave's first: a new run
                                         {300, 1},  {307, 4}};  // past empty groups of keys
  // The key counter reads an octave's keys in groups of 8 (in pairs of them with AVX2) and finds
  // its runs in two 64-bit words of positions: runs across those boundaries, gaps of 4 and 5
  // across the words', a run at each end of an octave. Offset -127 is the first position of
  // 1.0's octave, -255 of the one below; a negative octave's positions go the other way.
  const Buckets across_groups_and_words = {
      {-195, 20}, {-189, 2},                           // position 60, then 66: a gap of 5 across the words
      {-127, 1},  {-122, 2},  {-116, 3},               // the octave's first position; gaps of 4 and 5
      {-113, 4},  {-112, 17}, {-111, 1}, {-110, 300},  // across a group and a pair of groups
      {-68, 3},   {-63, 1},                            // position 59, then 64: a gap of 4 across the words
      {-3, 1},    {0, 1}};                             // after empty groups, up to the octave's last
  // Elements that move the range's ends: its first group the first or the second of a pair, its
  // last group one of a pair or alone.
  const Buckets lower_first_group = {{-253, 1}}, alone_last_group = {{4, 2}};
  static_assert(kMaxRunGap == 4, "the offsets above place gaps of 4 and 5");
  std::vector<Buckets> layouts = {around_an_octave_edge, across_groups_and_words};
  for (const Buckets& more : {lower_first_group, alone_last_group}) {
    layouts.push_back(across_groups_and_words);
    layouts.back().insert(layouts.back().end(), more.begin(), more.end());
  }
  for (const Buckets& buckets : layouts)
    for (const bool negative : {false, true})
      for (const bool positive : {false, true})
        for (const int zeros : {0, 40}) {
          SCOPED_TRACE(std::to_string(&buckets - layouts.data()) + std::to_string(negative) + std::to_string(positive) +
                       std::to_string(zeros));
          std::vector<uint32_t> bits(static_cast<size_t>(zeros), negative ? 0x80000000u : 0u);
          for (const auto& [offset, count] : buckets)
            for (int i = 0; i < count; ++i) {
              // An element inside the bucket of its key (the keys round up).
              const uint32_t magnitude = ((kOctaveTop + offset) << 16) - 0x8000u + static_cast<uint32_t>(i % 7);
              if (negative) bits.push_back(magnitude | 0x80000000u);
              if (positive) bits.push_back(magnitude + static_cast<uint32_t>(i % 3));
            }
          if (bits.size() < 256) continue;  // the reductions' pass counts keys from 256 elements on
          std::shuffle(bits.begin(), bits.end(), std::mt19937_64(bits.size()));
          expect_float32_distribution_exact(float32_from_bits(bits), "runs");
        }
}

// Small values of the dtypes a float holds exactly are sorted by bucket
// (kernels/sorted_elements.h), float64 values counted by bucket: the same elements both ways
// must give the same distribution, at every size around the sort's thresholds (std::sort below
// 64 finite elements, the radix sort up to 1,024 elements, the counters above; the ingest's form
// counts keys in the reductions' pass from 256 elements on).
TEST(Distribution, SmallFloat32ValuesSortedEqualTheirFloat64Copies) {
  for (const size_t n : {1, 2, 5, 63, 64, 65, 200, 255, 256, 257, 1023, 1024, 1025}) {
    SCOPED_TRACE(n);
    std::vector<uint32_t> bits = random_normal_float32_bits(n, 30 + n);
    expect_float32_distribution_exact(float32_from_bits(bits), "normal");
    for (size_t i = 0; i < n; ++i) {
      if (i % 2) bits[i] = 0;
      if (i % 7 == 0) bits[i] = 0x80000000u;
      if (i % 11 == 0) bits[i] &= 0xFFFF0000u;  // bucket edges
      if (i % 13 == 0) bits[i] = 0x3F800000u + (static_cast<uint32_t>(i) % 3) * 0x10000u;
    }
    expect_float32_distribution_exact(float32_from_bits(bits), "zeros and edges");
    for (const uint32_t odd : {0x7FC00000u, 0xFFFFFFFFu, 0x7F800000u, 0xFF800000u, 0x7F7FFFFFu, 0xFF7F0001u,
                               0x00800000u, 0x80800001u, 0x00000001u, 0x807FFFFFu}) {
      std::vector<uint32_t> with = bits;
      for (size_t i = 0; i < n; i += 3) with[i] = odd;  // NaNs, infinities, extremes, subnormals
      expect_float32_distribution_exact(float32_from_bits(with), "one kind");
    }
    expect_float32_distribution_exact(std::vector<float>(n, -0.75f), "all equal");
    expect_float32_distribution_exact(std::vector<float>(n, -0.0f), "all -0.0");
    std::vector<uint32_t> one(n);
    for (size_t i = 0; i < n; ++i) one[i] = 0xC0490001u + static_cast<uint32_t>((i * 7919) % 0xFFFF);
    expect_float32_distribution_exact(float32_from_bits(one), "every order statistic in one bucket");
  }
}

// The other dtypes a float holds exactly take the same path: float16 and int8 against float64.
TEST(Distribution, SmallFloat16AndInt8ValuesEqualTheirFloat64Copies) {
  std::mt19937_64 rng(5);
  for (const size_t n : {3, 100, 1000}) {
    std::vector<uint16_t> half(n);
    std::vector<int8_t> bytes(n);
    for (size_t i = 0; i < n; ++i) {
      half[i] = static_cast<uint16_t>(rng());
      bytes[i] = static_cast<int8_t>(rng());
    }
    half[0] = 0x0001;  // a float16 subnormal: a normal float32
    for (const DType dtype : {DType::Float16, DType::Int8}) {
      SCOPED_TRACE(n);
      TensorView v;
      v.dtype = dtype;
      v.ndim = 1;
      v.dims[0] = v.numel = static_cast<int64_t>(n);
      v.data = dtype == DType::Float16 ? reinterpret_cast<const uint8_t*>(half.data())
                                       : reinterpret_cast<const uint8_t*>(bytes.data());
      v.data_bytes = n * (dtype == DType::Float16 ? 2 : 1);
      std::vector<double> wide(n);
      for (size_t i = 0; i < n; ++i) wide[i] = dtype == DType::Float16 ? half_to_float(half[i]) : bytes[i];
      Distribution got, want;
      ASSERT_TRUE(compute_distribution(v, &got));
      ASSERT_TRUE(compute_distribution(view_of(wide), &want));
      expect_same_counts(got, want);
      for (int i = 0; i < kDistributionPercentiles; ++i) {
        if (std::isnan(want.percentile[i])) EXPECT_TRUE(std::isnan(got.percentile[i])) << i;
        else EXPECT_EQ(got.percentile[i], want.percentile[i]) << i;
      }
    }
  }
}

// A thread's counters go back to a pool when it ends and the next thread takes them
// (thread_scratch.h): what a value counted there must not reach the next thread's values.
TEST(Distribution, CountersHandedOnBetweenThreadsAreClean) {
  const std::vector<double> small = {-3.5, 0.0, 1.0, 2.0, 2.0, 1e30, kNaN, -kInf};
  const std::vector<float> large = float32_from_bits(random_normal_float32_bits(kLargeFloat32, 21));
  const std::vector<double> other_small = {0.25, 0.5, -0.75, 8.0};
  const std::vector<float> other_large = float32_from_bits(random_normal_float32_bits(kLargeFloat32, 22));
  auto distributions = [&](const std::vector<double>& s, const std::vector<float>& l) {
    std::vector<Distribution> out(2);
    EXPECT_TRUE(compute_distribution(view_of(s), &out[0]));
    Reductions r;
    bool has_reductions = false;
    EXPECT_TRUE(compute_reductions_and_distribution(view_of(l), &r, &has_reductions, &out[1]));
    return out;
  };
  const std::vector<Distribution> want = distributions(other_small, other_large);
  for (int round = 0; round < 2; ++round) {
    std::thread([&] { distributions(small, large); }).join();
    std::vector<Distribution> got;
    std::thread([&] { got = distributions(other_small, other_large); }).join();
    for (size_t i = 0; i < want.size(); ++i) {
      EXPECT_EQ(got[i].histogram, want[i].histogram) << i;
      EXPECT_EQ(got[i].count(), want[i].count()) << i;
      EXPECT_EQ(got[i].zero, want[i].zero) << i;
      for (int p = 0; p < kDistributionPercentiles; ++p)
        EXPECT_EQ(got[i].percentile[p], want[i].percentile[p]) << i << " p" << p;
    }
  }
}

// The bucket counter's AVX2 slots of float64 elements (bucket_counter.cc) are the portable loop's,
// and so are the stats of the block: every class of element, every length of a block's tail.
TEST(BucketCounter, Float64SlotsInAvx2AreThePortableOnes) {
  using distribution_kernel::BlockStats;
  using distribution_kernel::kBlock;
  using distribution_kernel::kJunkBase;
  std::mt19937_64 rng(11);
  const uint64_t specials[] = {0,
                               1ull << 63,
                               0x7FF0000000000000ull,
                               0xFFF0000000000000ull,
                               0x7FF8000000000001ull,
                               1,
                               0x000FFFFFFFFFFFFFull,
                               0x0010000000000000ull,
                               0x7FEFFFFFFFFFFFFFull,
                               0x3FF0000000000000ull};
  auto load = [](const uint8_t* q, int64_t i) {
    double x;
    std::memcpy(&x, q + i * 8, 8);
    return x;
  };
  for (int round = 0; round < 200; ++round) {
    const int64_t len = round < kBlock ? round % (kBlock + 1) : kBlock;
    const int64_t start = round % 3;  // the block need not start the value
    std::vector<uint64_t> bits(static_cast<size_t>(start + len));
    for (uint64_t& b : bits) b = rng() % 4 ? rng() : specials[rng() % std::size(specials)];
    const auto* p = reinterpret_cast<const uint8_t*>(bits.data());
    std::vector<int32_t> avx2(static_cast<size_t>(len) + 1), portable(static_cast<size_t>(len) + 1);
    BlockStats a, b;
    if (!distribution_kernel::compute_slots_float64_avx2(p, start, len, avx2.data(), &a)) GTEST_SKIP() << "no AVX2";
    distribution_kernel::compute_slots(p, start, len, load, portable.data(), &b);
    EXPECT_EQ(a.zero, b.zero);
    EXPECT_EQ(a.nan, b.nan);
    EXPECT_EQ(a.lo, b.lo);
    EXPECT_EQ(a.hi, b.hi);
    for (int64_t j = 0; j < len; ++j) {
      const bool junk = portable[static_cast<size_t>(j)] >= kJunkBase;
      EXPECT_EQ(avx2[static_cast<size_t>(j)] >= kJunkBase, junk) << j;
      if (!junk) {
        EXPECT_EQ(avx2[static_cast<size_t>(j)], portable[static_cast<size_t>(j)]) << j;
      }
    }
  }
}
}  // namespace
}  // namespace trialdb
