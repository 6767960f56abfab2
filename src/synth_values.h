// The values `trialdb synth` writes: a fast deterministic generator and the conversion of a
// float to each numeric dtype's bytes. Shared by the layer-cycling trial (cmd_synth.cc) and the
// trial shaped by a profile (synth_profile.cc).
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "schema/value_blob.h"

namespace trialdb::cli {

// xorshift64*: fast, deterministic, good enough for synthetic values.
struct Rng {
  uint64_t s;
  explicit Rng(uint64_t seed) : s(seed ? seed : 0x9E3779B97F4A7C15ull) {}
  uint64_t next() {
    s ^= s >> 12;
    s ^= s << 25;
    s ^= s >> 27;
    return s * 0x2545F4914F6CDD1Dull;
  }
  float uniform_pm1() { return static_cast<float>(next() >> 40) * (2.0f / 16777216.0f) - 1.0f; }  // [-1, 1)
  float uniform01() { return static_cast<float>(next() >> 40) * (1.0f / 16777216.0f); }           // [0, 1)
};

// Mixes two numbers into a seed (splitmix64's finaliser): one stream per tensor, step and worker.
uint64_t mix(uint64_t a, uint64_t b);

uint16_t float_to_half(float f);      // IEEE binary16, round to nearest even
uint16_t float_to_bfloat16(float f);  // round to nearest even (no NaNs)

// Stores v as element i of a buffer of `dtype` (Float32, Float64, Float16, BFloat16, Int32, Int64;
// integers are lrint(v * int_scale)); other dtypes store nothing.
inline void store_element(uint8_t* p, DType dtype, int64_t i, float v, float int_scale) {
  switch (dtype) {
    case DType::Float32: std::memcpy(p + 4 * i, &v, 4); break;
    case DType::Float64: {
      double d = v;
      std::memcpy(p + 8 * i, &d, 8);
      break;
    }
    case DType::Float16: {
      uint16_t h = float_to_half(v);
      std::memcpy(p + 2 * i, &h, 2);
      break;
    }
    case DType::BFloat16: {
      uint16_t h = float_to_bfloat16(v);
      std::memcpy(p + 2 * i, &h, 2);
      break;
    }
    case DType::Int32: {
      int32_t k = static_cast<int32_t>(std::lrint(v * int_scale));
      std::memcpy(p + 4 * i, &k, 4);
      break;
    }
    case DType::Int64: {
      int64_t k = std::llrint(v * int_scale);
      std::memcpy(p + 8 * i, &k, 8);
      break;
    }
    default: break;
  }
}

// Fills buf with n elements gen() converted to dtype.
template <class Gen>
void fill_values(std::vector<uint8_t>* buf, DType dtype, int64_t n, float int_scale, Gen&& gen) {
  buf->resize(static_cast<size_t>(n) * dtype_size(dtype));
  uint8_t* p = buf->data();
  for (int64_t i = 0; i < n; ++i) store_element(p, dtype, i, gen(), int_scale);
}

}  // namespace trialdb::cli
