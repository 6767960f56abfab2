// JSON text for tensor elements, shared by every function that writes JSON (tensor_json,
// tensor_histogram, tensor_at, tensor_each): numbers as the shortest text that reads back as the
// same value in their own precision, NaN as null, +-Inf as +-1e999 (JSON has neither), strings
// with JSON's escapes.
//
// Examples (tests/sqlext/test_doc_examples.py runs them on the fixture trial pt_bad_init):
//   sqlite> SELECT tensor_json(tensor_from_json('[0.1, 0.5, NaN, -Infinity]', 'float32'));
//   [0.1,0.5,null,-1e999]
//   sqlite> SELECT tensor_json(tensor_from_json('["tab\t", "quote\""]'));
//   ["tab\t","quote\""]
#include "sqlext/json_text.h"

#include <charconv>
#include <cmath>

#include "kernels/element_loader.h"
#include "schema/utf8.h"

namespace trialdb::sqlext {

void append_json_double(std::string* out, double x) {
  if (std::isnan(x)) return out->append("null"), void();
  if (std::isinf(x)) return out->append(x > 0 ? "1e999" : "-1e999"), void();
  char buf[32];
  auto r = std::to_chars(buf, buf + sizeof buf, x);
  out->append(buf, r.ptr);
}

void append_json_float(std::string* out, float x) {
  if (std::isnan(x) || std::isinf(x)) return append_json_double(out, x);
  char buf[32];
  auto r = std::to_chars(buf, buf + sizeof buf, x);
  out->append(buf, r.ptr);
}

void append_json_string(std::string* out, std::string_view s) {
  static const char kHex[] = "0123456789abcdef";
  out->push_back('"');
  for (size_t i = 0; i < s.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80) {
      // Text must be UTF-8 (Python's sqlite3 cannot fetch anything else): each byte that starts
      // no character becomes U+FFFD.
      const size_t n = utf8_sequence_length(s, i);
      if (n == 0) {
        out->append(kUtf8Replacement);
      } else {
        out->append(s.substr(i, n));
        i += n - 1;
      }
      continue;
    }
    switch (c) {
      case '"': out->append("\\\""); break;
      case '\\': out->append("\\\\"); break;
      case '\n': out->append("\\n"); break;
      case '\r': out->append("\\r"); break;
      case '\t': out->append("\\t"); break;
      default:
        if (c < 0x20) {
          out->append("\\u00");
          out->push_back(kHex[c >> 4]);
          out->push_back(kHex[c & 15]);
        } else {
          out->push_back(static_cast<char>(c));
        }
    }
  }
  out->push_back('"');
}

uint64_t element_as_uint64(const TensorView& v, int64_t i) {
  if (v.dtype != DType::UInt64) return static_cast<uint64_t>(element_as_int64(v, i));
  uint64_t x;
  std::memcpy(&x, v.data + 8 * i, 8);
  return x;
}

void append_json_element(std::string* out, const TensorView& v, int64_t i) {
  char buf[32];
  switch (v.dtype) {
    case DType::Bool: out->append(v.data[i] ? "true" : "false"); return;
    case DType::UInt64: {
      auto r = std::to_chars(buf, buf + sizeof buf, element_as_uint64(v, i));
      out->append(buf, r.ptr);
      return;
    }
    case DType::Int8:
    case DType::UInt8:
    case DType::Int16:
    case DType::UInt16:
    case DType::Int32:
    case DType::UInt32:
    case DType::Int64: {
      auto r = std::to_chars(buf, buf + sizeof buf, element_as_int64(v, i));
      out->append(buf, r.ptr);
      return;
    }
    case DType::Float16:
    case DType::BFloat16:
    case DType::Float32: append_json_float(out, static_cast<float>(element_as_double(v, i))); return;
    case DType::Float64: append_json_double(out, element_as_double(v, i)); return;
    case DType::Complex64: {
      float c[2];
      std::memcpy(c, v.data + 8 * i, 8);
      out->push_back('[');
      append_json_float(out, c[0]);
      out->push_back(',');
      append_json_float(out, c[1]);
      out->push_back(']');
      return;
    }
    case DType::Complex128: {
      double c[2];
      std::memcpy(c, v.data + 16 * i, 16);
      out->push_back('[');
      append_json_double(out, c[0]);
      out->push_back(',');
      append_json_double(out, c[1]);
      out->push_back(']');
      return;
    }
    case DType::String: out->append("null"); return;  // callers use StringCursor
  }
}

// Correctly rounded (nearest even) float64 -> float16, as numpy's astype(float16).
uint16_t double_to_half(double d) {
  uint16_t sign = std::signbit(d) ? 0x8000 : 0;
  if (std::isnan(d)) return sign | 0x7e00;
  double a = std::fabs(d);
  if (a >= 65520.0) return sign | 0x7c00;                                 // rounds to infinity
  if (a < 6.103515625e-05) {                                              // subnormal: multiples of 2^-24
    return sign | static_cast<uint16_t>(std::nearbyint(a * 16777216.0));  // 1024 = smallest normal
  }
  int e;
  double f = std::frexp(a, &e);                   // a = f * 2^e, f in [0.5, 1)
  double m = std::nearbyint((f * 2 - 1) * 1024);  // exact: f * 2 - 1 in [0, 1)
  int exp = e - 1 + 15;
  if (m == 1024) {
    m = 0;
    ++exp;
  }
  if (exp >= 31) return sign | 0x7c00;
  return sign | static_cast<uint16_t>(exp << 10) | static_cast<uint16_t>(m);
}

}  // namespace trialdb::sqlext
