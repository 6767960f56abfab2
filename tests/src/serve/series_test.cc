// src/serve/series.h: smoothing as TensorBoard's, and downsampling that keeps every extreme.
#include "src/serve/series.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

using trialdb::serve::downsample;
using trialdb::serve::Series;
using trialdb::serve::smooth;

TEST(Smooth, DebiasedMovingAverageStartsAtTheFirstValue) {
  std::vector<double> v = {10, 20, 20};
  smooth(&v, 0.5);
  EXPECT_DOUBLE_EQ(v[0], 10);                       // 5 / (1 - 0.5)
  EXPECT_DOUBLE_EQ(v[1], (2.5 + 10) / (1 - 0.25));  // last = 12.5, debiased by 0.75
  EXPECT_DOUBLE_EQ(v[2], (6.25 + 10) / (1 - 0.125));
}

TEST(Smooth, ZeroWeightAndNonFiniteValuesAreLeftAlone) {
  std::vector<double> v = {1, 2, 3};
  smooth(&v, 0);
  EXPECT_EQ(v, (std::vector<double>{1, 2, 3}));
  std::vector<double> w = {1, std::numeric_limits<double>::quiet_NaN(), 1};
  smooth(&w, 0.9);
  EXPECT_TRUE(std::isnan(w[1]));
  EXPECT_DOUBLE_EQ(w[2], 1);
}

TEST(Downsample, ShortSeriesAreUnchanged) {
  Series s{{1, 2, 3}, {3, 1, 2}};
  Series d = downsample(s, 10);
  EXPECT_EQ(d.steps, s.steps);
  EXPECT_EQ(d.values, s.values);
}

TEST(Downsample, KeepsEveryStretchsExtremesAndTheEnds) {
  Series s;
  for (int i = 0; i < 100000; ++i) {
    s.steps.push_back(i);
    s.values.push_back(std::sin(i * 0.001));
  }
  s.values[54321] = 50;  // one spike up, one down, one NaN: none may disappear
  s.values[7777] = -50;
  s.values[90000] = std::numeric_limits<double>::quiet_NaN();
  Series d = downsample(s, 1000);
  EXPECT_LE(d.steps.size(), 1000u + 1000u / 2 + 2);
  EXPECT_TRUE(std::is_sorted(d.steps.begin(), d.steps.end()));
  EXPECT_EQ(d.steps.front(), 0);
  EXPECT_EQ(d.steps.back(), 99999);
  auto has = [&](int64_t step) { return std::find(d.steps.begin(), d.steps.end(), step) != d.steps.end(); };
  EXPECT_TRUE(has(54321));
  EXPECT_TRUE(has(7777));
  EXPECT_TRUE(has(90000));
  for (size_t i = 0; i < d.steps.size(); ++i) {
    if (!std::isnan(d.values[i])) {
      EXPECT_EQ(d.values[i], s.values[d.steps[i]]);  // points are exact, not averaged
    }
  }
}
