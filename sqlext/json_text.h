// JSON text for tensor elements: the number formatting shared by tensor_json, tensor_histogram,
// tensor_at and tensor_each, and a cursor over the variable-length string elements.
#pragma once
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "schema/value_blob.h"

namespace trialdb::sqlext {

// Shortest text that reads back as the same double (as Python's repr). NaN is written as null
// and +-Inf as +-1e999 (JSON has neither; 1e999 reads back as Inf in Python and SQLite).
void append_json_double(std::string* out, double x);
// As above, but shortest in float32 precision (for float32/float16/bfloat16 values), so 0.1f
// prints as 0.1 and still reads back as the same float32.
void append_json_float(std::string* out, float x);
// A JSON string literal; a byte that is not UTF-8 becomes U+FFFD, so the text is always UTF-8.
void append_json_string(std::string* out, std::string_view s);
// Element i of any dtype: integers exactly, bool as true/false, complex as [re, im], strings
// as JSON strings (for strings use StringCursor instead: elements are variable length).
void append_json_element(std::string* out, const TensorView& v, int64_t i);

// Walks the string elements of a string-dtype view in order (the decoder has validated them).
class StringCursor {
 public:
  explicit StringCursor(const TensorView& v) : p_(v.data) {}
  std::string_view next() {
    uint32_t len;
    std::memcpy(&len, p_, 4);
    std::string_view s(reinterpret_cast<const char*>(p_ + 4), len);
    p_ += 4 + static_cast<size_t>(len);
    return s;
  }

 private:
  const uint8_t* p_;
};

// Correctly rounded (nearest even) float64 -> float16 bits, as numpy's astype(float16).
uint16_t double_to_half(double d);

// Element i as uint64 for integer dtypes (exact, unlike element_as_double; the int64 form is
// trialdb::element_as_int64 in kernels/element_loader.h).
uint64_t element_as_uint64(const TensorView& v, int64_t i);

}  // namespace trialdb::sqlext
