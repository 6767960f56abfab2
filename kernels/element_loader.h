// The element loader of a value's dtype for the distribution kernel: a function (data, i) ->
// the i-th element as a number. It returns float for the dtypes a float holds exactly, so the
// elements the selection gathers take no more room than the value, and double for the others.
#pragma once
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "schema/value_blob.h"

namespace trialdb::distribution_kernel {

// Calls f with the loader of v's dtype; false (f not called) for dtypes without an order.
template <class F>
bool with_loader(const TensorView& v, F&& f) {
  auto as = [](auto t) {
    using T = decltype(t);
    return [](const uint8_t* p, int64_t i) {
      T x;
      std::memcpy(&x, p + i * sizeof(T), sizeof(T));
      if constexpr (sizeof(T) <= 2 || std::is_same_v<T, float>) return static_cast<float>(x);
      else return static_cast<double>(x);
    };
  };
  switch (v.dtype) {
    case DType::Bool: f([](const uint8_t* p, int64_t i) { return p[i] ? 1.0f : 0.0f; }); return true;
    case DType::Int8: f(as(int8_t{})); return true;
    case DType::UInt8: f(as(uint8_t{})); return true;
    case DType::Int16: f(as(int16_t{})); return true;
    case DType::UInt16: f(as(uint16_t{})); return true;
    case DType::Int32: f(as(int32_t{})); return true;
    case DType::UInt32: f(as(uint32_t{})); return true;
    case DType::Int64: f(as(int64_t{})); return true;
    case DType::UInt64: f(as(uint64_t{})); return true;
    case DType::Float32: f(as(float{})); return true;
    case DType::Float64: f(as(double{})); return true;
    case DType::Float16:
      f([](const uint8_t* p, int64_t i) { uint16_t h; std::memcpy(&h, p + 2 * i, 2); return half_to_float(h); });
      return true;
    case DType::BFloat16:
      f([](const uint8_t* p, int64_t i) { uint16_t h; std::memcpy(&h, p + 2 * i, 2); return bfloat16_to_float(h); });
      return true;
    default: return false;
  }
}

}  // namespace trialdb::distribution_kernel
