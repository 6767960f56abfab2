// The rule_* SQL functions (rule_functions.h).
#include "rules_sql/rule_functions.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdarg>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <new>
#include <exception>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "schema/py_regex.h"
#include "schema/value_blob.h"
#include "sqlext/sqlite_api.h"   // in build/lib/trialdb_rules.so, calls go through the host's API table

namespace trialdb::rules {

namespace {

constexpr int kFlags = SQLITE_UTF8 | SQLITE_DETERMINISTIC;

void errorf(sqlite3_context* ctx, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
void errorf(sqlite3_context* ctx, const char* fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  sqlite3_result_error(ctx, buf, -1);
}

// A decoded tensor argument.
struct Arg {
  TensorView view;
  std::vector<uint8_t> scratch;
};

enum Status { kOk, kNull, kError };

// kNull for SQL NULL, strings and complex tensors; kError (set on ctx) for a bad blob.
Status get_numeric(sqlite3_context* ctx, sqlite3_value* v, const char* fn, int argno, Arg* out) {
  if (sqlite3_value_type(v) == SQLITE_NULL) return kNull;
  if (sqlite3_value_type(v) != SQLITE_BLOB) {
    errorf(ctx, "%s: argument %d is not a value blob", fn, argno + 1);
    return kError;
  }
  const trialdb::Status st =
      decode_blob(sqlite3_value_blob(v), static_cast<size_t>(sqlite3_value_bytes(v)), &out->view, &out->scratch);
  if (!st.is_ok()) {
    errorf(ctx, "%s: argument %d: %s", fn, argno + 1, st.cause().c_str());
    return kError;
  }
  return dtype_is_real(out->view.dtype) ? kOk : kNull;
}

bool same_shape(const TensorView& a, const TensorView& b) {
  if (a.ndim != b.ndim) return false;
  for (int i = 0; i < a.ndim; ++i)
    if (a.dims[i] != b.dims[i]) return false;
  return true;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// Comma-separated items, trimmed; an empty text has no items.
std::vector<std::string_view> split_list(std::string_view s) {
  std::vector<std::string_view> items;
  if (trim(s).empty()) return items;
  size_t start = 0;
  for (;;) {
    size_t comma = s.find(',', start);
    items.push_back(trim(s.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start)));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return items;
}

std::string_view value_text(sqlite3_value* v) {
  const unsigned char* p = sqlite3_value_text(v);
  return p ? std::string_view(reinterpret_cast<const char*>(p), static_cast<size_t>(sqlite3_value_bytes(v)))
           : std::string_view();
}

// Parses a parameter number. 0: a number (in *out); 1: "no value" (NULL/''/none); -1: bad.
int parse_real(std::string_view s, double* out) {
  s = trim(s);
  std::string lower(s);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower.empty() || lower == "none" || lower == "null") return 1;
  if (lower == "inf" || lower == "+inf" || lower == "infinity" || lower == "+infinity") {
    *out = HUGE_VAL;
    return 0;
  }
  if (lower == "-inf" || lower == "-infinity") {
    *out = -HUGE_VAL;
    return 0;
  }
  char* end = nullptr;
  errno = 0;
  double d = std::strtod(lower.c_str(), &end);
  if (end == lower.c_str() || *end != '\0') return -1;
  *out = d;
  return 0;
}

std::string number_text(double x) {
  char buf[64];
  if (std::isfinite(x) && x == std::floor(x) && std::fabs(x) < 9.007199254740992e15)
    snprintf(buf, sizeof buf, "%lld", static_cast<long long>(x));
  else if (std::isnan(x))
    return "NaN";
  else if (std::isinf(x))
    return x > 0 ? "Infinity" : "-Infinity";
  else
    snprintf(buf, sizeof buf, "%.17g", x);
  return buf;
}

// ---------------------------------------------------------------------------------------------
// Parameters.

void real_fn(sqlite3_context* ctx, int, sqlite3_value** argv) {
  int type = sqlite3_value_type(argv[0]);
  if (type == SQLITE_NULL) return sqlite3_result_null(ctx);
  if (type == SQLITE_INTEGER || type == SQLITE_FLOAT) return sqlite3_result_double(ctx, sqlite3_value_double(argv[0]));
  double d;
  std::string_view s = value_text(argv[0]);
  int rc = parse_real(s, &d);
  if (rc == 1) return sqlite3_result_null(ctx);
  if (rc < 0) return errorf(ctx, "rule parameter '%.*s' is not a number", static_cast<int>(s.size()), s.data());
  sqlite3_result_double(ctx, d);
}

void bool_fn(sqlite3_context* ctx, int, sqlite3_value** argv) {
  int type = sqlite3_value_type(argv[0]);
  if (type == SQLITE_NULL) return sqlite3_result_int(ctx, 0);
  if (type == SQLITE_INTEGER || type == SQLITE_FLOAT) return sqlite3_result_int(ctx, sqlite3_value_double(argv[0]) != 0);
  std::string s(trim(value_text(argv[0])));
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (s == "true" || s == "1" || s == "yes" || s == "on") return sqlite3_result_int(ctx, 1);
  if (s == "false" || s == "0" || s == "no" || s == "off" || s.empty() || s == "none") return sqlite3_result_int(ctx, 0);
  errorf(ctx, "rule parameter '%s' is not a boolean (true or false)", s.c_str());
}

void list_json_fn(sqlite3_context* ctx, int, sqlite3_value** argv) {
  if (sqlite3_value_type(argv[0]) == SQLITE_NULL) return sqlite3_result_text(ctx, "[]", 2, SQLITE_STATIC);
  std::string out = "[";
  for (std::string_view item : split_list(value_text(argv[0]))) {
    double d;
    if (parse_real(item, &d) != 0)
      return errorf(ctx, "rule parameter list item '%.*s' is not a number", static_cast<int>(item.size()), item.data());
    if (out.size() > 1) out += ',';
    out += std::isfinite(d) ? number_text(d) : (d > 0 ? "9e999" : "-9e999");
  }
  out += ']';
  sqlite3_result_text(ctx, out.data(), static_cast<int>(out.size()), SQLITE_TRANSIENT);
}

void list_item_fn(sqlite3_context* ctx, int, sqlite3_value** argv) {
  if (sqlite3_value_type(argv[0]) == SQLITE_NULL) return sqlite3_result_null(ctx);
  std::vector<std::string_view> items = split_list(value_text(argv[0]));
  int64_t i = sqlite3_value_int64(argv[1]);
  if (i < 0 || i >= static_cast<int64_t>(items.size())) return sqlite3_result_null(ctx);
  double d;
  int rc = parse_real(items[static_cast<size_t>(i)], &d);
  if (rc == 1) return sqlite3_result_null(ctx);
  if (rc < 0)
    return errorf(ctx, "rule parameter list item '%.*s' is not a number", static_cast<int>(items[i].size()),
                  items[i].data());
  sqlite3_result_double(ctx, d);
}

void in_list_fn(sqlite3_context* ctx, int, sqlite3_value** argv) {
  if (sqlite3_value_type(argv[0]) == SQLITE_NULL || sqlite3_value_type(argv[1]) == SQLITE_NULL)
    return sqlite3_result_int(ctx, 0);
  std::string_view item = value_text(argv[0]);
  for (std::string_view x : split_list(value_text(argv[1])))
    if (x == item) return sqlite3_result_int(ctx, 1);
  sqlite3_result_int(ctx, 0);
}

// The compiled patterns of one list, cached on the statement (the list is a constant or a
// parameter that rarely changes between rows).
struct PatternList {
  std::string source;
  std::vector<std::unique_ptr<PyRegex>> patterns;
};

void delete_patterns(void* p) { delete static_cast<PatternList*>(p); }

void regexp_any_fn(sqlite3_context* ctx, int, sqlite3_value** argv) {
  if (sqlite3_value_type(argv[0]) == SQLITE_NULL || sqlite3_value_type(argv[1]) == SQLITE_NULL)
    return sqlite3_result_int(ctx, 0);
  std::string_view list = value_text(argv[0]);
  auto* cached = static_cast<PatternList*>(sqlite3_get_auxdata(ctx, 0));
  if (!cached || cached->source != list) {
    auto fresh = std::make_unique<PatternList>();
    fresh->source = std::string(list);
    for (std::string_view item : split_list(list)) {
      if (item.empty()) continue;
      std::unique_ptr<PyRegex> re;
      const trialdb::Status st = PyRegex::compile(item, &re);
      if (!re) return errorf(ctx, "rule_regexp_any: bad regular expression '%.*s': %s", static_cast<int>(item.size()),
                             item.data(), st.cause().c_str());
      fresh->patterns.push_back(std::move(re));
    }
    cached = fresh.release();
    sqlite3_set_auxdata(ctx, 0, cached, delete_patterns);
    cached = static_cast<PatternList*>(sqlite3_get_auxdata(ctx, 0));
    if (!cached) return sqlite3_result_error_nomem(ctx);
  }
  std::string_view subject = value_text(argv[1]);
  for (const auto& re : cached->patterns)
    if (re->search(subject)) return sqlite3_result_int(ctx, 1);
  sqlite3_result_int(ctx, 0);
}

// ---------------------------------------------------------------------------------------------
// Tensors.

void count_fn(sqlite3_context* ctx, int argc, sqlite3_value** argv) {
  Arg a;
  Status st = get_numeric(ctx, argv[0], "rule_count", 0, &a);
  if (st != kOk) return;
  std::string_view what = value_text(argv[1]);
  const TensorView& v = a.view;
  int64_t n = 0;
  if (what == "all") {
    n = v.numel;
  } else if (what == "nan") {
    for (int64_t i = 0; i < v.numel; ++i) n += std::isnan(element_as_double(v, i));
  } else if (what == "inf") {
    for (int64_t i = 0; i < v.numel; ++i) n += std::isinf(element_as_double(v, i));
  } else if (what == "zero") {
    for (int64_t i = 0; i < v.numel; ++i) n += element_as_double(v, i) == 0.0;
  } else if (what == "equal") {
    if (argc < 3 || sqlite3_value_type(argv[2]) == SQLITE_NULL) return sqlite3_result_null(ctx);
    double x = sqlite3_value_double(argv[2]);
    for (int64_t i = 0; i < v.numel; ++i) n += element_as_double(v, i) == x;
  } else {
    return errorf(ctx, "rule_count: unknown count '%.*s' (expected nan, inf, zero, equal or all)",
                  static_cast<int>(what.size()), what.data());
  }
  sqlite3_result_int64(ctx, n);
}

void percentile_fn(sqlite3_context* ctx, int, sqlite3_value** argv) {
  Arg a;
  if (get_numeric(ctx, argv[0], "rule_percentile", 0, &a) != kOk) return;
  if (sqlite3_value_type(argv[1]) == SQLITE_NULL) return sqlite3_result_null(ctx);
  double p = sqlite3_value_double(argv[1]);
  if (!(p >= 0 && p <= 100)) return errorf(ctx, "rule_percentile: percentile %g is not in [0, 100]", p);
  const TensorView& v = a.view;
  if (v.numel == 0) return sqlite3_result_null(ctx);
  std::vector<double> x(static_cast<size_t>(v.numel));
  for (int64_t i = 0; i < v.numel; ++i) {
    x[i] = element_as_double(v, i);
    if (std::isnan(x[i])) return sqlite3_result_null(ctx);
  }
  // numpy 'linear': position p/100 * (n - 1) between the two neighbouring order statistics.
  double pos = p / 100.0 * static_cast<double>(x.size() - 1);
  size_t lo = static_cast<size_t>(std::floor(pos));
  double frac = pos - static_cast<double>(lo);
  std::nth_element(x.begin(), x.begin() + lo, x.end());
  double a_lo = x[lo];
  double r = a_lo;
  if (frac > 0 && lo + 1 < x.size()) {
    double a_hi = *std::min_element(x.begin() + lo + 1, x.end());
    r = a_lo + (a_hi - a_lo) * frac;
  }
  sqlite3_result_double(ctx, r);
}

void allclose_fn(sqlite3_context* ctx, int, sqlite3_value** argv) {
  Arg a, b;
  Status sa = get_numeric(ctx, argv[0], "rule_allclose", 0, &a);
  if (sa == kError) return;
  Status sb = get_numeric(ctx, argv[1], "rule_allclose", 1, &b);
  if (sb == kError || sa == kNull || sb == kNull) return;
  double rtol = sqlite3_value_double(argv[2]), atol = sqlite3_value_double(argv[3]);
  bool equal_nan = sqlite3_value_int(argv[4]) != 0;
  if (!same_shape(a.view, b.view)) return sqlite3_result_int(ctx, 0);
  for (int64_t i = 0; i < a.view.numel; ++i) {
    double x = element_as_double(a.view, i), y = element_as_double(b.view, i);
    bool close;
    if (std::isnan(x) || std::isnan(y))
      close = equal_nan && std::isnan(x) && std::isnan(y);
    else if (std::isinf(x) || std::isinf(y))
      close = x == y;
    else
      close = std::fabs(x - y) <= atol + rtol * std::fabs(y);
    if (!close) return sqlite3_result_int(ctx, 0);
  }
  sqlite3_result_int(ctx, 1);
}

void diff_norm_fn(sqlite3_context* ctx, int, sqlite3_value** argv) {
  Arg a, b;
  Status sa = get_numeric(ctx, argv[0], "rule_diff_norm", 0, &a);
  if (sa == kError) return;
  Status sb = get_numeric(ctx, argv[1], "rule_diff_norm", 1, &b);
  if (sb == kError || sa == kNull || sb == kNull || !same_shape(a.view, b.view)) return;
  double s = 0;
  for (int64_t i = 0; i < a.view.numel; ++i) {
    double d = element_as_double(a.view, i) - element_as_double(b.view, i);
    s += d * d;
  }
  sqlite3_result_double(ctx, std::sqrt(s));
}

void inactive_units_fn(sqlite3_context* ctx, int, sqlite3_value** argv) {
  Arg a;
  if (get_numeric(ctx, argv[0], "rule_inactive_units", 0, &a) != kOk) return;
  bool has_lo = sqlite3_value_type(argv[1]) != SQLITE_NULL, has_hi = sqlite3_value_type(argv[2]) != SQLITE_NULL;
  double lo = sqlite3_value_double(argv[1]), hi = sqlite3_value_double(argv[2]);
  double threshold = sqlite3_value_double(argv[3]);
  const TensorView& v = a.view;
  int64_t batch = v.ndim >= 2 ? v.dims[0] : v.numel;
  if (batch <= 0 || v.numel == 0) return sqlite3_result_null(ctx);
  int64_t units = v.numel / batch;
  std::vector<int64_t> active(static_cast<size_t>(units), 0);
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t base = b * units;
    for (int64_t u = 0; u < units; ++u) {
      double x = element_as_double(v, base + u);
      active[u] += (!has_lo || x > lo) && (!has_hi || x < hi);
    }
  }
  int64_t inactive = 0;
  for (int64_t u = 0; u < units; ++u)
    inactive += 100.0 * static_cast<double>(active[u]) / static_cast<double>(batch) < threshold;
  sqlite3_result_double(ctx, 100.0 * static_cast<double>(inactive) / static_cast<double>(units));
}

void label_pairs_fn(sqlite3_context* ctx, int, sqlite3_value** argv) {
  Arg l, p;
  Status sl = get_numeric(ctx, argv[0], "rule_label_pairs", 0, &l);
  if (sl == kError) return;
  Status sp = get_numeric(ctx, argv[1], "rule_label_pairs", 1, &p);
  if (sp == kError || sl == kNull || sp == kNull) return;
  bool argmax = sqlite3_value_int(argv[2]) != 0;
  const TensorView& pv = p.view;
  std::vector<double> predictions;
  if (argmax && pv.ndim >= 1) {
    int64_t k = pv.dims[pv.ndim - 1];
    if (k <= 0) return sqlite3_result_null(ctx);
    int64_t rows = pv.numel / k;
    predictions.reserve(static_cast<size_t>(rows));
    for (int64_t r = 0; r < rows; ++r) {
      int64_t best = 0;
      double best_x = element_as_double(pv, r * k);
      for (int64_t j = 1; j < k && !std::isnan(best_x); ++j) {   // numpy: the first NaN wins
        double x = element_as_double(pv, r * k + j);
        if (x > best_x || std::isnan(x)) best = j, best_x = x;
      }
      predictions.push_back(static_cast<double>(best));
    }
  } else {
    predictions.reserve(static_cast<size_t>(pv.numel));
    for (int64_t i = 0; i < pv.numel; ++i) predictions.push_back(element_as_double(pv, i));
  }
  if (static_cast<int64_t>(predictions.size()) != l.view.numel) return sqlite3_result_null(ctx);
  std::map<std::pair<double, double>, int64_t> counts;
  for (int64_t i = 0; i < l.view.numel; ++i) {
    double label = element_as_double(l.view, i);
    if (std::isnan(label)) continue;
    ++counts[{label, predictions[i]}];
  }
  std::string out = "[";
  for (const auto& [key, n] : counts) {
    if (out.size() > 1) out += ',';
    out += '[' + number_text(key.first) + ',' + (std::isnan(key.second) ? std::string("null") : number_text(key.second)) +
           ',' + std::to_string(n) + ']';
  }
  out += ']';
  sqlite3_result_text(ctx, out.data(), static_cast<int>(out.size()), SQLITE_TRANSIENT);
}

void channel_sums_fn(sqlite3_context* ctx, int, sqlite3_value** argv) {
  Arg a;
  if (get_numeric(ctx, argv[0], "rule_channel_sums", 0, &a) != kOk) return;
  const TensorView& v = a.view;
  int64_t axis = sqlite3_value_int64(argv[1]);
  if (axis < 0) axis += v.ndim;
  if (axis < 0 || axis >= v.ndim) return sqlite3_result_null(ctx);
  int64_t len = v.dims[axis], inner = 1;
  for (int d = static_cast<int>(axis) + 1; d < v.ndim; ++d) inner *= v.dims[d];
  std::vector<double> sums(static_cast<size_t>(len), 0.0);
  if (len > 0 && inner > 0) {
    for (int64_t i = 0; i < v.numel; ++i) sums[(i / inner) % len] += element_as_double(v, i);
  }
  std::string out = "[";
  for (size_t c = 0; c < sums.size(); ++c) {
    if (c) out += ',';
    char buf[40];
    snprintf(buf, sizeof buf, "%.17g", sums[c]);
    out += std::isfinite(sums[c]) ? buf : "null";
  }
  out += ']';
  sqlite3_result_text(ctx, out.data(), static_cast<int>(out.size()), SQLITE_TRANSIENT);
}

// ---------------------------------------------------------------------------------------------
// Arithmetic.

void div_fn(sqlite3_context* ctx, int, sqlite3_value** argv) {
  if (sqlite3_value_type(argv[0]) == SQLITE_NULL || sqlite3_value_type(argv[1]) == SQLITE_NULL)
    return sqlite3_result_null(ctx);
  double r = sqlite3_value_double(argv[0]) / sqlite3_value_double(argv[1]);
  if (std::isnan(r)) return sqlite3_result_null(ctx);
  sqlite3_result_double(ctx, r);
}

void log2_fn(sqlite3_context* ctx, int, sqlite3_value** argv) {
  if (sqlite3_value_type(argv[0]) == SQLITE_NULL) return sqlite3_result_null(ctx);
  double x = sqlite3_value_double(argv[0]);
  if (!(x > 0)) return sqlite3_result_null(ctx);
  sqlite3_result_double(ctx, std::log2(x));
}

void number_text_fn(sqlite3_context* ctx, int, sqlite3_value** argv) {
  if (sqlite3_value_type(argv[0]) == SQLITE_NULL) return sqlite3_result_null(ctx);
  std::string s = number_text(sqlite3_value_double(argv[0]));
  sqlite3_result_text(ctx, s.data(), static_cast<int>(s.size()), SQLITE_TRANSIENT);
}

template <void (*F)(sqlite3_context*, int, sqlite3_value**)>
void guarded(sqlite3_context* ctx, int argc, sqlite3_value** argv) {
  try {
    F(ctx, argc, argv);
  } catch (const std::bad_alloc&) {
    sqlite3_result_error_nomem(ctx);
  } catch (const std::exception& e) {
    sqlite3_result_error(ctx, e.what(), -1);
  }
}

}  // namespace

int register_rule_functions(sqlite3* db) {
  struct Fn {
    const char* name;
    int nargs;
    void (*fn)(sqlite3_context*, int, sqlite3_value**);
  };
  static const Fn kFns[] = {
      {"rule_real", 1, guarded<real_fn>},
      {"rule_bool", 1, guarded<bool_fn>},
      {"rule_list_json", 1, guarded<list_json_fn>},
      {"rule_list_item", 2, guarded<list_item_fn>},
      {"rule_in_list", 2, guarded<in_list_fn>},
      {"rule_regexp_any", 2, guarded<regexp_any_fn>},
      {"rule_count", 2, guarded<count_fn>},
      {"rule_count", 3, guarded<count_fn>},
      {"rule_percentile", 2, guarded<percentile_fn>},
      {"rule_allclose", 5, guarded<allclose_fn>},
      {"rule_diff_norm", 2, guarded<diff_norm_fn>},
      {"rule_inactive_units", 4, guarded<inactive_units_fn>},
      {"rule_label_pairs", 3, guarded<label_pairs_fn>},
      {"rule_channel_sums", 2, guarded<channel_sums_fn>},
      {"rule_div", 2, guarded<div_fn>},
      {"rule_log2", 1, guarded<log2_fn>},
      {"rule_number_text", 1, guarded<number_text_fn>},
  };
  for (const Fn& f : kFns) {
    int rc = sqlite3_create_function_v2(db, f.name, f.nargs, kFlags, nullptr, f.fn, nullptr, nullptr, nullptr);
    if (rc != SQLITE_OK) return rc;
  }
  return SQLITE_OK;
}

}  // namespace trialdb::rules
