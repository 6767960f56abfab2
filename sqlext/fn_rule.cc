// The rule_* functions: what the built-in rules (rules_sql/*.sql, docs/RULES.md) need beyond
// the tensor_* functions: parsing SageMaker's string parameters, matching name lists, and the few
// computations only rules make. Counting, percentiles, allclose and norms are sqlext's tensor_*.
//
//   rule_real(text)                  number; 'inf', '+inf', '-inf' accepted; NULL, '', 'none'
//                                    and 'null' give NULL; anything else is an error
//   rule_bool(text)                  1 for true/1/yes/on, 0 for false/0/no/off/none/''/NULL;
//                                    anything else is an error
//   rule_list_json(csv)              "1, 2.5" -> '[1,2.5]' (items parsed by rule_real; +-inf
//                                    as +-9e999); NULL -> '[]'
//   rule_list_item(csv, i)           item i (0-based) as a number, NULL past the end
//   rule_in_list(text, csv)          1 when text equals one of the (trimmed) items, else 0
//   rule_regexp_any(csv, subject)    1 when any pattern matches (Python re.search), else 0 (also
//                                    for NULL); the compiled list is cached as regexp's pattern is
//                                    (once per connection, also when the list is a column)
//   rule_inactive_units(v, lo, hi, threshold)
//                                    percent of units whose activity (percent of batch entries
//                                    with lo < x < hi; a NULL bound is unbounded) is < threshold.
//                                    >= 2 dims: axis 0 is the batch; else v is one unit.
//   rule_channel_sums(v, axis)       JSON array of the sums per position of `axis` (a negative
//                                    axis counts from the end; out of range: NULL)
//   rule_div(a, b)                   a / b in IEEE arithmetic (x/0 = +-inf; 0/0 = NULL)
//   rule_log2(x)                     log2(x) (NULL for x <= 0)
//   rule_number_text(x)              3.0 -> '3', 0.5 -> '0.5'
//
// Tensor arguments are value blobs (docs/BLOB_FORMAT.md). Unlike the tensor_* functions, a
// string or complex tensor gives NULL (as a NULL tensor does), so a rule over "every tensor"
// skips them; a blob that does not decode is an error naming the function and the argument.
//
// Examples (tests/sqlext/test_doc_examples.py runs them on the fixture trial pt_bad_init):
//   sqlite> SELECT rule_real('1e-5'), rule_real('-inf'), rule_bool('True'), rule_list_json('0, 2.5, inf');
//   1.0e-05|-Inf|1|[0,2.5,9e999]
//   sqlite> SELECT rule_in_list('weights', 'biases, weights'),
//      ...>        rule_regexp_any('.*relu_output, .*tanh_input', 'layer1/tanh_input_0');
//   1|1
//   sqlite> SELECT rule_div(1, 0), rule_div(0, 0) IS NULL, rule_log2(8), rule_number_text(3.0);
//   Inf|1|3.0|3
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <limits>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "schema/param_list.h"
#include "schema/py_regex.h"
#include "sqlext/aux_cache.h"
#include "sqlext/tensor_arg.h"

namespace trialdb::sqlext {

namespace {

// A tensor argument holding real numbers: kArgNull also for strings and complex (see above).
ArgStatus get_real_tensor(sqlite3_context* ctx, sqlite3_value** argv, int argno, const char* fn, TensorArg* out) {
  ArgStatus st = get_tensor(ctx, argv, argno, fn, out);
  return st == kArgOk && !dtype_is_real(out->view.dtype) ? kArgNull : st;
}

std::string_view value_text(sqlite3_value* v) {
  const unsigned char* p = sqlite3_value_text(v);
  return p ? std::string_view(reinterpret_cast<const char*>(p), static_cast<size_t>(sqlite3_value_bytes(v)))
           : std::string_view();
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Parses a parameter number. 0: a number (in *out); 1: "no value" (''/none/null); -1: bad.
int parse_real(std::string_view s, double* out) {
  std::string l = lower(trim_blanks(s));
  if (l.empty() || l == "none" || l == "null") return 1;
  if (l == "inf" || l == "+inf" || l == "infinity" || l == "+infinity") return *out = HUGE_VAL, 0;
  if (l == "-inf" || l == "-infinity") return *out = -HUGE_VAL, 0;
  char* end = nullptr;
  double d = std::strtod(l.c_str(), &end);
  if (end == l.c_str() || *end != '\0') return -1;
  *out = d;
  return 0;
}

// Integral values without a fraction ("3"), NaN / Infinity / -Infinity, else 17 digits.
std::string number_text(double x) {
  char buf[64];
  if (std::isfinite(x) && x == std::floor(x) && std::fabs(x) < 9.007199254740992e15)
    snprintf(buf, sizeof buf, "%lld", static_cast<long long>(x));
  else if (std::isnan(x)) return "NaN";
  else if (std::isinf(x)) return x > 0 ? "Infinity" : "-Infinity";
  else snprintf(buf, sizeof buf, "%.17g", x);
  return buf;
}

// ---------------------------------------------------------------------------------------------
// Parameters and lists.

void real_fn(sqlite3_context* ctx, int, sqlite3_value** argv) {
  guarded(ctx, "rule_real", [&] {
    int type = sqlite3_value_type(argv[0]);
    if (type == SQLITE_NULL) return;
    if (type == SQLITE_INTEGER || type == SQLITE_FLOAT)
      return sqlite3_result_double(ctx, sqlite3_value_double(argv[0]));
    std::string_view s = value_text(argv[0]);
    double d;
    int rc = parse_real(s, &d);
    if (rc == 1) return;
    if (rc < 0)
      return result_errorf(ctx, "rule parameter '%.*s' is not a number", static_cast<int>(s.size()), s.data());
    sqlite3_result_double(ctx, d);
  });
}

void bool_fn(sqlite3_context* ctx, int, sqlite3_value** argv) {
  guarded(ctx, "rule_bool", [&] {
    int type = sqlite3_value_type(argv[0]);
    if (type == SQLITE_NULL) return sqlite3_result_int(ctx, 0);
    if (type == SQLITE_INTEGER || type == SQLITE_FLOAT)
      return sqlite3_result_int(ctx, sqlite3_value_double(argv[0]) != 0);
    std::string s = lower(trim_blanks(value_text(argv[0])));
    if (s == "true" || s == "1" || s == "yes" || s == "on") return sqlite3_result_int(ctx, 1);
    if (s == "false" || s == "0" || s == "no" || s == "off" || s.empty() || s == "none")
      return sqlite3_result_int(ctx, 0);
    result_errorf(ctx, "rule parameter '%s' is not a boolean (true or false)", s.c_str());
  });
}

void list_json_fn(sqlite3_context* ctx, int, sqlite3_value** argv) {
  guarded(ctx, "rule_list_json", [&] {
    if (sqlite3_value_type(argv[0]) == SQLITE_NULL) return sqlite3_result_text(ctx, "[]", 2, SQLITE_STATIC);
    std::string out = "[";
    for (std::string_view item : split_param_list(value_text(argv[0]))) {
      double d;
      if (parse_real(item, &d) != 0)
        return result_errorf(ctx, "rule parameter list item '%.*s' is not a number", static_cast<int>(item.size()),
                             item.data());
      if (out.size() > 1) out += ',';
      out += std::isfinite(d) ? number_text(d) : (d > 0 ? "9e999" : "-9e999");
    }
    out += ']';
    result_text(ctx, out);
  });
}

void list_item_fn(sqlite3_context* ctx, int, sqlite3_value** argv) {
  guarded(ctx, "rule_list_item", [&] {
    if (sqlite3_value_type(argv[0]) == SQLITE_NULL) return;
    std::vector<std::string_view> items = split_param_list(value_text(argv[0]));
    int64_t i = sqlite3_value_int64(argv[1]);
    if (i < 0 || i >= static_cast<int64_t>(items.size())) return;
    std::string_view item = items[static_cast<size_t>(i)];
    double d;
    int rc = parse_real(item, &d);
    if (rc == 1) return;
    if (rc < 0)
      return result_errorf(ctx, "rule parameter list item '%.*s' is not a number", static_cast<int>(item.size()),
                           item.data());
    sqlite3_result_double(ctx, d);
  });
}

void in_list_fn(sqlite3_context* ctx, int, sqlite3_value** argv) {
  guarded(ctx, "rule_in_list", [&] {
    if (sqlite3_value_type(argv[0]) == SQLITE_NULL || sqlite3_value_type(argv[1]) == SQLITE_NULL)
      return sqlite3_result_int(ctx, 0);
    std::string_view item = value_text(argv[0]);
    for (std::string_view x : split_param_list(value_text(argv[1])))
      if (x == item) return sqlite3_result_int(ctx, 1);
    sqlite3_result_int(ctx, 0);
  });
}

void regexp_any_fn(sqlite3_context* ctx, int, sqlite3_value** argv) {
  const char* fn = "rule_regexp_any";
  guarded(ctx, fn, [&] {
    if (sqlite3_value_type(argv[0]) == SQLITE_NULL || sqlite3_value_type(argv[1]) == SQLITE_NULL)
      return sqlite3_result_int(ctx, 0);
    std::shared_ptr<const PyRegexList> hold;
    const PyRegexList* list = cached_compiled<PyRegexList>(ctx, argv, 0, fn, PyRegexList::compile, &hold);
    if (!list) return;
    sqlite3_result_int(ctx, list->search(value_text(argv[1])) ? 1 : 0);
  });
}

// ---------------------------------------------------------------------------------------------
// Tensors.

// Adds to active[u] the batch entries of unit u with lo < x < hi, a bound left out when its k is
// false. One instantiation per dtype and pair of bounds, so the loop over a row's units is
// branch-free (this file is compiled with -O3 for the loops here).
template <class Loader, bool kLo, bool kHi>
void count_active(const uint8_t* data, int64_t batch, int64_t units, double lo, double hi, int64_t* active) {
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t u = 0; u < units; ++u) {
      const double x = Loader::load(data, b * units + u);
      active[u] += (!kLo || x > lo) & (!kHi || x < hi);
    }
}

// The same for float32 (what activations are), compared in float and counted in 32 bits so that
// the loop vectorizes: for a float x, x > lo exactly when x > the largest float not above lo,
// and x < hi exactly when x < the smallest float not below hi. A float32 value has fewer than
// 2^31 elements (a blob is at most 1 GB).
float float_at_most(double d) {
  float f = static_cast<float>(d);
  return static_cast<double>(f) > d ? std::nextafter(f, -std::numeric_limits<float>::infinity()) : f;
}
float float_at_least(double d) {
  float f = static_cast<float>(d);
  return static_cast<double>(f) < d ? std::nextafter(f, std::numeric_limits<float>::infinity()) : f;
}

template <bool kLo, bool kHi>
void count_active_float32(const uint8_t* data, int64_t batch, int64_t units, double lo, double hi, int64_t* active) {
  const float lo_f = float_at_most(lo), hi_f = float_at_least(hi);
  std::vector<int32_t> n(static_cast<size_t>(units), 0);
  for (int64_t b = 0; b < batch; ++b) {
    const uint8_t* row = data + 4 * b * units;
    for (int64_t u = 0; u < units; ++u) {
      float x;
      std::memcpy(&x, row + 4 * u, 4);
      n[u] += (!kLo || x > lo_f) & (!kHi || x < hi_f);
    }
  }
  for (int64_t u = 0; u < units; ++u) active[u] += n[u];
}

void inactive_units_fn(sqlite3_context* ctx, int, sqlite3_value** argv) {
  const char* fn = "rule_inactive_units";
  guarded(ctx, fn, [&] {
    TensorArg t;
    if (get_real_tensor(ctx, argv, 0, fn, &t) != kArgOk) return;
    const bool has_lo = sqlite3_value_type(argv[1]) != SQLITE_NULL, has_hi = sqlite3_value_type(argv[2]) != SQLITE_NULL;
    const double lo = sqlite3_value_double(argv[1]), hi = sqlite3_value_double(argv[2]);
    const double threshold = sqlite3_value_double(argv[3]);
    const TensorView& v = t.view;
    const int64_t batch = v.ndim >= 2 ? v.dims[0] : v.numel;
    if (batch <= 0 || v.numel == 0) return;
    const int64_t units = v.numel / batch;
    std::vector<int64_t> active(static_cast<size_t>(units), 0);
    if (v.dtype == DType::Float32) {
      if (has_lo && has_hi) count_active_float32<true, true>(v.data, batch, units, lo, hi, active.data());
      else if (has_lo) count_active_float32<true, false>(v.data, batch, units, lo, hi, active.data());
      else if (has_hi) count_active_float32<false, true>(v.data, batch, units, lo, hi, active.data());
      else count_active_float32<false, false>(v.data, batch, units, lo, hi, active.data());
    } else
      visit_real(v.dtype, [&](auto loader) {
        using Loader = decltype(loader);
        if (has_lo && has_hi) count_active<Loader, true, true>(v.data, batch, units, lo, hi, active.data());
        else if (has_lo) count_active<Loader, true, false>(v.data, batch, units, lo, hi, active.data());
        else if (has_hi) count_active<Loader, false, true>(v.data, batch, units, lo, hi, active.data());
        else count_active<Loader, false, false>(v.data, batch, units, lo, hi, active.data());
      });
    int64_t inactive = 0;
    for (int64_t u = 0; u < units; ++u)
      inactive += 100.0 * static_cast<double>(active[u]) / static_cast<double>(batch) < threshold;
    sqlite3_result_double(ctx, 100.0 * static_cast<double>(inactive) / static_cast<double>(units));
  });
}

void channel_sums_fn(sqlite3_context* ctx, int, sqlite3_value** argv) {
  const char* fn = "rule_channel_sums";
  guarded(ctx, fn, [&] {
    TensorArg t;
    if (get_real_tensor(ctx, argv, 0, fn, &t) != kArgOk) return;
    const TensorView& v = t.view;
    int64_t axis = sqlite3_value_int64(argv[1]);
    if (axis < 0) axis += v.ndim;
    if (axis < 0 || axis >= v.ndim) return;
    const int64_t len = v.dims[axis];
    if (len > length_limit(ctx) / 2) return sqlite3_result_error_toobig(ctx);  // an empty tensor's dim may be huge
    int64_t inner = 1;
    for (int d = static_cast<int>(axis) + 1; d < v.ndim; ++d) inner *= v.dims[d];
    std::vector<double> sums(static_cast<size_t>(len), 0.0);
    if (len > 0 && inner > 0)
      visit_real(v.dtype, [&](auto loader) {
        for (int64_t i = 0; i < v.numel; ++i) sums[(i / inner) % len] += loader.load(v.data, i);
      });
    std::string out = "[";
    for (size_t c = 0; c < sums.size(); ++c) {
      if (c) out += ',';
      char buf[40];
      snprintf(buf, sizeof buf, "%.17g", sums[c]);
      out += std::isfinite(sums[c]) ? buf : "null";
    }
    out += ']';
    result_text(ctx, out);
  });
}

// ---------------------------------------------------------------------------------------------
// Arithmetic.

void div_fn(sqlite3_context* ctx, int, sqlite3_value** argv) {
  if (sqlite3_value_type(argv[0]) == SQLITE_NULL || sqlite3_value_type(argv[1]) == SQLITE_NULL) return;
  double r = sqlite3_value_double(argv[0]) / sqlite3_value_double(argv[1]);
  if (!std::isnan(r)) sqlite3_result_double(ctx, r);
}

void log2_fn(sqlite3_context* ctx, int, sqlite3_value** argv) {
  if (sqlite3_value_type(argv[0]) == SQLITE_NULL) return;
  double x = sqlite3_value_double(argv[0]);
  if (x > 0) sqlite3_result_double(ctx, std::log2(x));
}

void number_text_fn(sqlite3_context* ctx, int, sqlite3_value** argv) {
  guarded(ctx, "rule_number_text", [&] {
    if (sqlite3_value_type(argv[0]) == SQLITE_NULL) return;
    result_text(ctx, number_text(sqlite3_value_double(argv[0])));
  });
}

}  // namespace

int register_rule_functions(sqlite3* db) {
  struct Fn {
    const char* name;
    int nargs;
    void (*fn)(sqlite3_context*, int, sqlite3_value**);
  };
  static constexpr Fn kFns[] = {
      {"rule_real", 1, real_fn},
      {"rule_bool", 1, bool_fn},
      {"rule_list_json", 1, list_json_fn},
      {"rule_list_item", 2, list_item_fn},
      {"rule_in_list", 2, in_list_fn},
      {"rule_inactive_units", 4, inactive_units_fn},
      {"rule_channel_sums", 2, channel_sums_fn},
      {"rule_div", 2, div_fn},
      {"rule_log2", 1, log2_fn},
      {"rule_number_text", 1, number_text_fn},
  };
  for (const Fn& f : kFns) {
    int rc = sqlite3_create_function_v2(db, f.name, f.nargs, kScalarFlags, nullptr, f.fn, nullptr, nullptr, nullptr);
    if (rc != SQLITE_OK) return rc;
  }
  return sqlite3_create_function_v2(db, "rule_regexp_any", 2, kScalarFlags, CompiledCache<PyRegexList>::create(),
                                    regexp_any_fn, nullptr, nullptr, CompiledCache<PyRegexList>::destroy);
}

}  // namespace trialdb::sqlext
