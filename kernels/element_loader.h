// The elements of a value, by its dtype, written once: the loader of each real dtype, and
// visit_real, which calls a function with the loader of a dtype so that loops over elements are
// instantiated per dtype with no per-element dispatch. Every kernel and SQL function reads the
// elements of a real value through these.
//
// A loader L has L::load(p, i), element i of the data at p as double, and L::as<Out>(p, i), the
// same as Out; L::kExactInFloat says whether a float holds every element exactly.
#pragma once
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "schema/value_blob.h"

namespace trialdb {

template <class T>
struct LoadAs {
  static constexpr bool kExactInFloat = sizeof(T) <= 2 || std::is_same_v<T, float>;
  template <class Out>
  static Out as(const uint8_t* p, int64_t i) {
    T x;
    std::memcpy(&x, p + i * static_cast<int64_t>(sizeof(T)), sizeof(T));
    return static_cast<Out>(x);
  }
  static double load(const uint8_t* p, int64_t i) { return as<double>(p, i); }
};
struct LoadBool {
  static constexpr bool kExactInFloat = true;
  template <class Out>
  static Out as(const uint8_t* p, int64_t i) {
    return p[i] ? Out(1) : Out(0);
  }
  static double load(const uint8_t* p, int64_t i) { return as<double>(p, i); }
};
struct LoadHalf {
  static constexpr bool kExactInFloat = true;
  template <class Out>
  static Out as(const uint8_t* p, int64_t i) {
    uint16_t h;
    std::memcpy(&h, p + 2 * i, 2);
    return static_cast<Out>(half_to_float(h));
  }
  static double load(const uint8_t* p, int64_t i) { return as<double>(p, i); }
};
struct LoadBFloat16 {
  static constexpr bool kExactInFloat = true;
  template <class Out>
  static Out as(const uint8_t* p, int64_t i) {
    uint16_t h;
    std::memcpy(&h, p + 2 * i, 2);
    return static_cast<Out>(bfloat16_to_float(h));
  }
  static double load(const uint8_t* p, int64_t i) { return as<double>(p, i); }
};

// Calls f with the loader of a real dtype; false (f not called) for strings and complex.
template <class F>
bool visit_real(DType t, F&& f) {
  switch (t) {
    case DType::Bool: f(LoadBool{}); return true;
    case DType::Int8: f(LoadAs<int8_t>{}); return true;
    case DType::UInt8: f(LoadAs<uint8_t>{}); return true;
    case DType::Int16: f(LoadAs<int16_t>{}); return true;
    case DType::UInt16: f(LoadAs<uint16_t>{}); return true;
    case DType::Int32: f(LoadAs<int32_t>{}); return true;
    case DType::UInt32: f(LoadAs<uint32_t>{}); return true;
    case DType::Int64: f(LoadAs<int64_t>{}); return true;
    case DType::UInt64: f(LoadAs<uint64_t>{}); return true;
    case DType::Float16: f(LoadHalf{}); return true;
    case DType::BFloat16: f(LoadBFloat16{}); return true;
    case DType::Float32: f(LoadAs<float>{}); return true;
    case DType::Float64: f(LoadAs<double>{}); return true;
    default: return false;
  }
}

// Whether a loader reads an integer or bool dtype.
template <class L>
constexpr bool kIntegerLoader = false;
template <class T>
constexpr bool kIntegerLoader<LoadAs<T>> = std::is_integral_v<T>;
template <>
inline constexpr bool kIntegerLoader<LoadBool> = true;

// Element i of a real-valued view as double (no bounds check: i < numel); NaN for other dtypes.
inline double element_as_double(const TensorView& v, int64_t i) {
  double x = std::numeric_limits<double>::quiet_NaN();
  visit_real(v.dtype, [&](auto loader) { x = decltype(loader)::load(v.data, i); });
  return x;
}

// Element i of an integer or bool view as int64 (uint64 wraps); 0 for other dtypes.
inline int64_t element_as_int64(const TensorView& v, int64_t i) {
  int64_t x = 0;
  visit_real(v.dtype, [&](auto loader) {
    using L = decltype(loader);
    if constexpr (kIntegerLoader<L>) x = L::template as<int64_t>(v.data, i);
  });
  return x;
}

}  // namespace trialdb

namespace trialdb::distribution_kernel {

// The element loader of a value's dtype for the distribution kernel: a function (data, i) ->
// the i-th element as a number, float for the dtypes a float holds exactly (so the elements the
// selection gathers take no more room than the value), double for the others. False (f not
// called) for dtypes without an order.
template <class F>
bool with_loader(const TensorView& v, F&& f) {
  return visit_real(v.dtype, [&](auto loader) {
    using L = decltype(loader);
    using Out = std::conditional_t<L::kExactInFloat, float, double>;
    f([](const uint8_t* p, int64_t i) { return L::template as<Out>(p, i); });
  });
}

}  // namespace trialdb::distribution_kernel
