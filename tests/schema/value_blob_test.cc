// Unit tests of the value blob codec (docs/BLOB_FORMAT.md): round trips, validation, compression, half precision.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "schema/value_blob.h"

using namespace trialdb;

TEST(ValueBlob, RoundTripAndValidation) {
  int64_t dims[2] = {2, 3};
  float data[6] = {1, 2, 3, 4, 5, 6};
  for (bool z : {false, true}) {
    std::string b = encode_blob(DType::Float32, dims, 2, data, sizeof data, z);
    TensorView v;
    std::vector<uint8_t> scratch;
    Status st = decode_blob(b.data(), b.size(), &v, &scratch);
    ASSERT_TRUE(st.is_ok()) << st.to_string();
    EXPECT_EQ(v.ndim, 2);
    EXPECT_EQ(v.numel, 6);
    EXPECT_EQ(std::memcmp(v.data, data, sizeof data), 0);
    // Every truncation is rejected, never read past.
    for (size_t n = 0; n < b.size(); ++n) EXPECT_FALSE(decode_blob(b.data(), n, &v, &scratch).is_ok()) << n;
  }
  std::string b = encode_blob(DType::Float32, dims, 2, data, sizeof data);
  b[1] = 99;
  TensorView v;
  std::vector<uint8_t> scratch;
  Status st = decode_blob(b.data(), b.size(), &v, &scratch);
  EXPECT_EQ(st.kind(), ErrorKind::kInvalidInput);
  EXPECT_EQ(st.cause(), "value blob has an unknown dtype");
}

TEST(ValueBlob, CompressionShrinksZeros) {
  std::vector<float> zeros(10000, 0.0f);
  int64_t dims[1] = {10000};
  std::string z = encode_blob(DType::Float32, dims, 1, zeros.data(), zeros.size() * 4, true);
  EXPECT_LT(z.size(), 1000u);
  EXPECT_EQ(z[3], static_cast<char>(kBlobZlib));
}

TEST(ValueBlob, HalfPrecision) {
  EXPECT_EQ(half_to_float(0x3c00), 1.0f);
  EXPECT_EQ(half_to_float(0xc000), -2.0f);
  EXPECT_EQ(half_to_float(0x0001), std::ldexp(1.0f, -24));  // smallest subnormal
  EXPECT_TRUE(std::isinf(half_to_float(0x7c00)));
  EXPECT_TRUE(std::isnan(half_to_float(0x7e00)));
  EXPECT_EQ(bfloat16_to_float(0x3f80), 1.0f);
}
