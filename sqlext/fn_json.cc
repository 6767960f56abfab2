// Between blobs and JSON / SQL values: tensor_json(v [, max_elements]) (nested arrays following
// the shape), tensor_at(v, i0 [, i1, ...]) (one element) and tensor_from_json(json [, dtype])
// (builds a blob; nested arrays give the shape).
//
// Examples (tests/sqlext/test_doc_examples.py runs them on the fixture trial pt_bad_init):
//   sqlite> SELECT tensor_json(tensor_from_json('[[0.1, 2], [NaN, -Infinity]]', 'float32'));
//   [[0.1,2],[null,-1e999]]
//   sqlite> SELECT tensor_at(v, 4), tensor_at(v, -1), tensor_at(v, 1, 0)
//      ...>   FROM (SELECT tensor_from_json('[[1, 2, 3], [4, 5, 6]]', 'int32') AS v);
//   5|6|4
//   sqlite> SELECT tensor_json(tensor_from_json('[[1, 2], [3, 4]]'), 3);
//   [1,2,3]
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "kernels/element_loader.h"
#include "schema/json_depth.h"
#include "sqlext/json_text.h"
#include "sqlext/tensor_arg.h"

namespace trialdb::sqlext {

namespace {

// ---- tensor_json ------------------------------------------------------------------------------

struct JsonWriter {
  const TensorView& v;
  std::string* out;
  StringCursor strings;
  int64_t next = 0;  // flat index of the next element

  void element() {
    if (v.dtype == DType::String) append_json_string(out, strings.next());
    else append_json_element(out, v, next);
    ++next;
  }
  void nested(int dim) {
    if (dim == v.ndim) return element();
    out->push_back('[');
    for (int64_t k = 0; k < v.dims[dim]; ++k) {
      if (k) out->push_back(',');
      nested(dim + 1);
    }
    out->push_back(']');
  }
};

void json_fn(sqlite3_context* ctx, int argc, sqlite3_value** argv) {
  const char* fn = "tensor_json";
  guarded(ctx, fn, [&] {
    TensorArg t;
    if (get_tensor(ctx, argv, 0, fn, &t) != kArgOk) return;
    const TensorView& v = t.view;
    int64_t max_elements = -1;
    if (argc > 1) {
      if (!get_int(ctx, argv, 1, fn, "max_elements", &max_elements)) return;
      if (max_elements < 0) return result_errorf(ctx, "%s: max_elements must be >= 0", fn);
    }
    // A rough size bound first, so a huge tensor fails fast instead of building gigabytes.
    if (v.numel > length_limit(ctx) / 2 && (max_elements < 0 || max_elements > length_limit(ctx) / 2))
      return sqlite3_result_error_toobig(ctx);
    // Empty tensors can still nest a huge number of [] (shape [2^40, 0]): bound the brackets.
    int64_t containers = 1, limit = length_limit(ctx) / 2;
    for (int d = 0; d + 1 < v.ndim && containers > 0; ++d) {
      if (v.dims[d] > limit / containers) return sqlite3_result_error_toobig(ctx);
      containers *= v.dims[d];
    }
    std::string out;
    JsonWriter w{v, &out, StringCursor(v)};
    if (max_elements >= 0 && v.numel > max_elements) {
      // Too many elements: a flat array of the first max_elements, in C order.
      out.push_back('[');
      for (int64_t i = 0; i < max_elements; ++i) {
        if (i) out.push_back(',');
        w.element();
      }
      out.push_back(']');
    } else {
      w.nested(0);
    }
    result_text(ctx, out);
  });
}

}  // namespace

void result_element(sqlite3_context* ctx, const TensorView& v, int64_t i) {
  switch (v.dtype) {
    case DType::String: {
      StringCursor c(v);
      std::string_view s;
      for (int64_t k = 0; k <= i; ++k) s = c.next();
      sqlite3_result_text64(ctx, s.data(), s.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
      return;
    }
    case DType::Complex64:
    case DType::Complex128: {
      std::string out;
      append_json_element(&out, v, i);
      return result_text(ctx, out);
    }
    case DType::UInt64: {
      uint64_t x = element_as_uint64(v, i);
      if (x > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
        return sqlite3_result_double(ctx, static_cast<double>(x));
      return sqlite3_result_int64(ctx, static_cast<int64_t>(x));
    }
    default:
      if (dtype_is_integer(v.dtype)) return sqlite3_result_int64(ctx, element_as_int64(v, i));
      return sqlite3_result_double(ctx, element_as_double(v, i));
  }
}

namespace {

// ---- tensor_at --------------------------------------------------------------------------------

void at_fn(sqlite3_context* ctx, int argc, sqlite3_value** argv) {
  const char* fn = "tensor_at";
  guarded(ctx, fn, [&] {
    if (argc < 2) return result_errorf(ctx, "%s: expected a value blob and at least one index", fn);
    TensorArg t;
    if (get_tensor(ctx, argv, 0, fn, &t) != kArgOk) return;
    const TensorView& v = t.view;
    int nidx = argc - 1;
    int64_t flat = 0;
    if (nidx == 1) {
      int64_t i;
      if (!get_int(ctx, argv, 1, fn, "index", &i)) return;
      if (i < -v.numel || i >= v.numel)
        return result_errorf(ctx, "%s: flat index %lld is out of range for %lld elements", fn,
                             static_cast<long long>(i), static_cast<long long>(v.numel));
      flat = i < 0 ? i + v.numel : i;
    } else if (nidx == v.ndim) {
      for (int d = 0; d < v.ndim; ++d) {
        int64_t i;
        if (!get_int(ctx, argv, 1 + d, fn, "index", &i)) return;
        if (i < -v.dims[d] || i >= v.dims[d])
          return result_errorf(ctx, "%s: index %lld is out of range for dimension %d of size %lld", fn,
                               static_cast<long long>(i), d, static_cast<long long>(v.dims[d]));
        flat = flat * v.dims[d] + (i < 0 ? i + v.dims[d] : i);
      }
    } else {
      return result_errorf(ctx, "%s: got %d indices for a %d-d tensor (give 1 flat index or %d)", fn, nidx, v.ndim,
                           v.ndim);
    }
    result_element(ctx, v, flat);
  });
}

// ---- tensor_from_json -------------------------------------------------------------------------

constexpr int kMaxJsonDepth = kMaxDims + 1;  // +1: complex values nest [re, im] one level deeper

// JSON has no NaN or Inf, but the JSON that tensor_json, SQLite and Python write for them does
// appear: numbers that overflow (1e999, SQLite's 9e999) and Python's NaN / Infinity /
// -Infinity. They are rewritten to what the parser accepts: null (NaN) and the strings "inf" /
// "-inf", which number() maps back. *special tells the caller the strings are not text.
std::string normalise_special_numbers(std::string_view in, bool* special) {
  std::string out;
  out.reserve(in.size());
  bool in_string = false;
  for (size_t i = 0; i < in.size(); ++i) {
    char c = in[i];
    if (in_string) {
      out.push_back(c);
      if (c == '\\' && i + 1 < in.size()) out.push_back(in[++i]);
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
      out.push_back(c);
    } else if (in.substr(i, 3) == "NaN") {
      out += "null", i += 2, *special = true;
    } else if (in.substr(i, 8) == "Infinity") {
      out += "\"inf\"", i += 7, *special = true;
    } else if (in.substr(i, 9) == "-Infinity") {
      out += "\"-inf\"", i += 8, *special = true;
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      size_t j = i + 1;
      while (j < in.size() && (std::isdigit(static_cast<unsigned char>(in[j])) || in[j] == '.' || in[j] == 'e' ||
                               in[j] == 'E' || in[j] == '+' || in[j] == '-'))
        ++j;
      std::string token(in.substr(i, j - i));
      double d = std::strtod(token.c_str(), nullptr);
      if (std::isinf(d)) {
        out += d > 0 ? "\"inf\"" : "\"-inf\"";
        *special = true;
      } else {
        out += token;
      }
      i = j - 1;
    } else {
      out.push_back(c);
    }
  }
  return out;
}

struct FromJson {
  sqlite3_context* ctx = nullptr;
  const char* fn = "tensor_from_json";
  DType dtype = DType::Float64;
  int64_t dims[kMaxDims + 1] = {};
  int ndim = 0;
  std::string data;
  int64_t count = 0;  // leaves written so far (for messages)

  bool fail(const char* what, const nlohmann::json& j) {
    std::string text = j.dump();
    if (text.size() > 40) text = text.substr(0, 40) + "...";
    result_errorf(ctx, "%s: element %lld (%s): %s", fn, static_cast<long long>(count), text.c_str(), what);
    return false;
  }

  // The shape is read off the first element at each depth; walk() then checks that every
  // sub-array agrees (a ragged array is an error).
  bool infer_shape(const nlohmann::json& j) {
    const nlohmann::json* p = &j;
    while (p->is_array()) {
      if (ndim > kMaxDims) return result_errorf(ctx, "%s: more than %d dimensions", fn, kMaxDims), false;
      dims[ndim++] = static_cast<int64_t>(p->size());
      if (p->empty()) break;
      p = &(*p)[0];
    }
    return true;
  }

  bool walk(const nlohmann::json& j, int dim) {
    if (dim < ndim) {
      if (!j.is_array() || static_cast<int64_t>(j.size()) != dims[dim])
        return fail("ragged array (shape differs from the first element's)", j);
      for (const auto& e : j)
        if (!walk(e, dim + 1)) return false;
      return true;
    }
    if (j.is_array()) return fail("ragged array (deeper than the first element)", j);
    return leaf(j);
  }

  bool number(const nlohmann::json& j, double* out) {
    if (j.is_number()) return *out = j.get<double>(), true;
    if (j.is_boolean()) return *out = j.get<bool>() ? 1 : 0, true;
    if (j.is_null()) return *out = std::numeric_limits<double>::quiet_NaN(), true;
    if (j.is_string()) {
      std::string s = j.get<std::string>();
      for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      if (s == "nan") return *out = std::numeric_limits<double>::quiet_NaN(), true;
      if (s == "inf" || s == "infinity") return *out = std::numeric_limits<double>::infinity(), true;
      if (s == "-inf" || s == "-infinity") return *out = -std::numeric_limits<double>::infinity(), true;
    }
    return fail("not a number", j);
  }

  template <class T>
  void put(T x) {
    data.append(reinterpret_cast<const char*>(&x), sizeof x);
  }

  bool integer(const nlohmann::json& j, int64_t lo, uint64_t hi) {
    if (j.is_boolean()) {
      put_int(j.get<bool>() ? 1 : 0);
      return true;
    }
    if (j.is_number_unsigned()) {
      uint64_t u = j.get<uint64_t>();
      if (u > hi) return fail("out of range for the dtype", j);
      return put_uint(u), true;
    }
    if (j.is_number_integer()) {
      int64_t x = j.get<int64_t>();
      if (x < lo || (x > 0 && static_cast<uint64_t>(x) > hi)) return fail("out of range for the dtype", j);
      return put_int(x), true;
    }
    if (j.is_number_float()) {
      double d = j.get<double>();
      if (d != std::floor(d)) return fail("not an integer", j);
      if (d < static_cast<double>(lo) || d >= 18446744073709551616.0 || (d >= 0 && static_cast<uint64_t>(d) > hi))
        return fail("out of range for the dtype", j);
      if (d < 0) return put_int(static_cast<int64_t>(d)), true;
      return put_uint(static_cast<uint64_t>(d)), true;
    }
    return fail("not an integer", j);
  }
  void put_int(int64_t x) {
    switch (dtype) {
      case DType::Bool:
      case DType::Int8:
      case DType::UInt8: put(static_cast<uint8_t>(x)); break;
      case DType::Int16:
      case DType::UInt16: put(static_cast<uint16_t>(x)); break;
      case DType::Int32:
      case DType::UInt32: put(static_cast<uint32_t>(x)); break;
      default: put(static_cast<uint64_t>(x)); break;
    }
  }
  void put_uint(uint64_t x) { put_int(static_cast<int64_t>(x)); }

  bool leaf(const nlohmann::json& j) {
    double d;
    switch (dtype) {
      case DType::String:
        if (!j.is_string()) return fail("not a string", j);
        {
          const std::string& s = j.get_ref<const std::string&>();
          put(static_cast<uint32_t>(s.size()));
          data.append(s);
        }
        break;
      case DType::Bool:
        if (!integer(j, 0, 1)) return false;
        break;
      case DType::Int8:
        if (!integer(j, INT8_MIN, INT8_MAX)) return false;
        break;
      case DType::UInt8:
        if (!integer(j, 0, UINT8_MAX)) return false;
        break;
      case DType::Int16:
        if (!integer(j, INT16_MIN, INT16_MAX)) return false;
        break;
      case DType::UInt16:
        if (!integer(j, 0, UINT16_MAX)) return false;
        break;
      case DType::Int32:
        if (!integer(j, INT32_MIN, INT32_MAX)) return false;
        break;
      case DType::UInt32:
        if (!integer(j, 0, UINT32_MAX)) return false;
        break;
      case DType::Int64:
        if (!integer(j, INT64_MIN, INT64_MAX)) return false;
        break;
      case DType::UInt64:
        if (!integer(j, 0, UINT64_MAX)) return false;
        break;
      case DType::Float16:
        if (!number(j, &d)) return false;
        put(double_to_half(d));
        break;
      case DType::BFloat16:
        if (!number(j, &d)) return false;
        put(float_to_bfloat16(static_cast<float>(d)));
        break;
      case DType::Float32:
        if (!number(j, &d)) return false;
        put(static_cast<float>(d));
        break;
      case DType::Float64:
      case DType::Complex64:
      case DType::Complex128:  // the [re, im] pairs are the last dimension
        if (!number(j, &d)) return false;
        if (dtype == DType::Complex64) put(static_cast<float>(d));
        else put(d);
        break;
    }
    ++count;
    return true;
  }

  static uint16_t float_to_bfloat16(float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    if (std::isnan(f)) return static_cast<uint16_t>((u >> 16) | 0x40);
    u += 0x7fff + ((u >> 16) & 1);  // round to nearest even
    return static_cast<uint16_t>(u >> 16);
  }
};

// True when every leaf of j is a string (and there is at least one): the default dtype is then
// "string" rather than float64.
bool all_strings(const nlohmann::json& j) {
  if (j.is_string()) return true;
  if (!j.is_array() || j.empty()) return false;
  for (const auto& e : j)
    if (!all_strings(e)) return false;
  return true;
}

void from_json_fn(sqlite3_context* ctx, int argc, sqlite3_value** argv) {
  const char* fn = "tensor_from_json";
  guarded(ctx, fn, [&] {
    if (sqlite3_value_type(argv[0]) == SQLITE_NULL) return;
    std::string text;
    if (sqlite3_value_type(argv[0]) == SQLITE_INTEGER || sqlite3_value_type(argv[0]) == SQLITE_FLOAT) {
      const unsigned char* num = sqlite3_value_text(argv[0]);
      if (!num) return sqlite3_result_error_nomem(ctx);
      text = reinterpret_cast<const char*>(num);
    } else if (!get_text(ctx, argv, 0, fn, "json", &text)) {
      return;
    }
    bool special = false;
    text = normalise_special_numbers(text, &special);
    if (Status st = check_json_depth(text, kMaxJsonDepth); !st.is_ok())
      return result_errorf(ctx, "%s: %s", fn, st.cause().c_str());
    nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) return result_errorf(ctx, "%s: argument 1 is not valid JSON", fn);
    if (j.is_object()) return result_errorf(ctx, "%s: expected a number, a string or nested arrays, got an object", fn);
    FromJson b;
    b.ctx = ctx;
    if (argc > 1) {
      std::string name;
      if (!get_text(ctx, argv, 1, fn, "dtype", &name)) return;
      auto dt = dtype_from_name(name);
      if (!dt) return result_errorf(ctx, "%s: unknown dtype '%s'", fn, name.c_str());
      b.dtype = *dt;
    } else {
      b.dtype = !special && all_strings(j) ? DType::String : DType::Float64;
    }
    if (!b.infer_shape(j)) return;
    if (!b.walk(j, 0)) return;
    int ndim = b.ndim;
    if (b.dtype == DType::Complex64 || b.dtype == DType::Complex128) {
      if (ndim == 0 || b.dims[ndim - 1] != 2)
        return result_errorf(ctx, "%s: complex values are given as [re, im] pairs (last dimension 2)", fn);
      --ndim;
    }
    if (ndim > kMaxDims) return result_errorf(ctx, "%s: more than %d dimensions", fn, kMaxDims);
    ResultBlob out(ctx, b.dtype, b.dims, ndim, b.data.size());
    if (!out.ok()) return;
    if (!b.data.empty()) std::memcpy(out.data(), b.data.data(), b.data.size());
    out.finish();
  });
}

}  // namespace

int register_json_functions(sqlite3* db) {
  int rc = SQLITE_OK;
  auto add = [&](const char* name, int nargs, void (*f)(sqlite3_context*, int, sqlite3_value**)) {
    if (rc == SQLITE_OK)
      rc = sqlite3_create_function_v2(db, name, nargs, kScalarFlags, nullptr, f, nullptr, nullptr, nullptr);
  };
  add("tensor_json", 1, json_fn);
  add("tensor_json", 2, json_fn);
  add("tensor_at", -1, at_fn);
  add("tensor_from_json", 1, from_json_fn);
  add("tensor_from_json", 2, from_json_fn);
  return rc;
}

}  // namespace trialdb::sqlext
