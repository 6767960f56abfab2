// What the kernel tests compare two distributions by (kernels/distribution.h).
#pragma once
#include <gtest/gtest.h>

#include "kernels/distribution.h"

namespace trialdb {

// Counts and histogram equal field for field.
inline void expect_same_counts(const Distribution& a, const Distribution& b) {
  EXPECT_EQ(a.nan, b.nan);
  EXPECT_EQ(a.pos_inf, b.pos_inf);
  EXPECT_EQ(a.neg_inf, b.neg_inf);
  EXPECT_EQ(a.zero, b.zero);
  EXPECT_EQ(a.negative, b.negative);
  EXPECT_EQ(a.positive, b.positive);
  EXPECT_EQ(a.histogram, b.histogram);
}

}  // namespace trialdb
