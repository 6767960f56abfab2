// Percentiles and quantiles:
//   tensor_percentile(v, p)               numpy.percentile(v, p), method 'linear'
//   tensor_percentiles(v, '[p, ...]')     the same for several p at once, as a JSON array
//   distribution_quantile(lo, hi, count, q)  aggregate over histogram_buckets rows: the quantile
//                                          q in [0, 1] of the merged buckets, within a bucket's
//                                          width (< 1%) of the exact one
// The tensor functions select the order statistics they need (kernels/distribution.h) instead of
// sorting, so asking for several percentiles costs one pass, not one sort per p. As numpy's
// percentile (not nanpercentile), a NaN element makes every percentile NULL.
//
// Examples (tests/sqlext/test_doc_examples.py runs them on the fixture trial pt_bad_init):
//   sqlite> SELECT tensor_percentile(v, 40), tensor_percentiles(v, '[0, 50, 100]')
//      ...>   FROM (SELECT tensor_from_json('[4, 1, 3, 2]') AS v);
//   2.2|[1,2.5,4]
//   sqlite> SELECT round(tensor_percentile(value, 50), 3),
//      ...>        (SELECT round(distribution_quantile(lo, hi, count, 0.5), 3) FROM histogram_buckets b
//      ...>          WHERE b.tensor = v.tensor AND b.step = v.step)
//      ...>   FROM tensor_values v WHERE tensor = 'Net_fc.weight' AND step = 0;
//   0.018|0.018
#include <algorithm>
#include <cmath>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "kernels/bucket_grid.h"
#include "kernels/distribution.h"
#include "schema/json_depth.h"
#include "kernels/percentile.h"
#include "sqlext/json_text.h"
#include "sqlext/tensor_arg.h"

namespace trialdb::sqlext {

namespace {

constexpr int kPercentsJsonDepth = 2;  // an array of numbers

bool valid_percent(double p) { return p >= 0 && p <= 100; }

void percentile_fn(sqlite3_context* ctx, int /*argc*/, sqlite3_value** argv) {
  const char* fn = "tensor_percentile";
  guarded(ctx, fn, [&] {
    TensorArg t;
    if (get_tensor(ctx, argv, 0, fn, &t) != kArgOk) return;
    if (!require_real(ctx, t.view, fn, 0)) return;
    if (sqlite3_value_type(argv[1]) == SQLITE_NULL) return;
    double p;
    if (!get_double(ctx, argv, 1, fn, "p", &p)) return;
    if (!valid_percent(p)) return result_errorf(ctx, "%s: p must be in [0, 100], got %g", fn, p);
    if (t.view.numel == 0) return;  // numpy raises; SQL gets NULL
    double out;
    const int64_t nan = compute_percentiles(t.view, &p, 1, &out);
    if (nan < 0) return result_errorf(ctx, "%s: the value has too many elements", fn);
    if (nan > 0 || std::isnan(out)) return;  // numpy gives NaN, SQL NULL
    sqlite3_result_double(ctx, out);
  });
}

void percentiles_fn(sqlite3_context* ctx, int /*argc*/, sqlite3_value** argv) {
  const char* fn = "tensor_percentiles";
  guarded(ctx, fn, [&] {
    TensorArg t;
    if (get_tensor(ctx, argv, 0, fn, &t) != kArgOk) return;
    if (!require_real(ctx, t.view, fn, 0)) return;
    if (sqlite3_value_type(argv[1]) == SQLITE_NULL) return;
    const auto* text = reinterpret_cast<const char*>(sqlite3_value_text(argv[1]));
    const std::string_view ps_text(text ? text : "", static_cast<size_t>(sqlite3_value_bytes(argv[1])));
    std::vector<double> ps;
    const auto bad = [&] {
      result_errorf(ctx, "%s: the percentiles must be a JSON array of numbers in [0, 100], e.g. '[5, 50, 95]'", fn);
    };
    if (!check_json_depth(ps_text, kPercentsJsonDepth).is_ok()) return bad();
    const nlohmann::json j = nlohmann::json::parse(ps_text, nullptr, false);
    if (!j.is_array()) return bad();
    for (const auto& e : j) {
      if (!e.is_number() || !valid_percent(e.get<double>())) return bad();
      ps.push_back(e.get<double>());
    }
    if (t.view.numel == 0) return;
    std::vector<double> out(ps.size());
    const int64_t nan = compute_percentiles(t.view, ps.data(), ps.size(), out.data());
    if (nan < 0) return result_errorf(ctx, "%s: the value has too many elements", fn);
    std::string json = "[";
    for (size_t i = 0; i < out.size(); ++i) {
      if (i) json += ',';
      if (nan > 0 || std::isnan(out[i])) json += "null";
      else append_json_double(&json, out[i]);
    }
    json += ']';
    result_text(ctx, json);
  });
}

// ---- distribution_quantile ----------------------------------------------------------------------

struct QuantileState {
  struct Bucket {
    double lo, hi;
    int64_t count;
  };
  // Rows of equal edges (the same bucket of several values) merge; keyed by the edges' bits.
  std::unordered_map<uint64_t, std::unordered_map<uint64_t, Bucket>> by_edges;
  double q = -1;
  bool failed = false;
};

QuantileState* quantile_state(sqlite3_context* ctx, bool create) {
  auto** slot = static_cast<QuantileState**>(sqlite3_aggregate_context(ctx, create ? sizeof(QuantileState*) : 0));
  if (!slot) return nullptr;
  if (!*slot && create) *slot = new QuantileState();
  return *slot;
}

void quantile_step(sqlite3_context* ctx, int /*argc*/, sqlite3_value** argv) {
  const char* fn = "distribution_quantile";
  guarded(ctx, fn, [&] {
    QuantileState* s = quantile_state(ctx, true);
    if (!s) return sqlite3_result_error_nomem(ctx);
    if (s->failed) return;
    for (int i = 0; i < 4; ++i)
      if (sqlite3_value_type(argv[i]) == SQLITE_NULL) return;  // NULL rows are skipped
    double lo, hi, q;
    int64_t count;
    if (!get_double(ctx, argv, 0, fn, "lo", &lo) || !get_double(ctx, argv, 1, fn, "hi", &hi) ||
        !get_int(ctx, argv, 2, fn, "count", &count) || !get_double(ctx, argv, 3, fn, "q", &q))
      return void(s->failed = true);
    const auto fail = [&](const char* what, double x) {
      s->failed = true;
      result_errorf(ctx, "%s: %s, got %g", fn, what, x);
    };
    if (!(q >= 0 && q <= 1)) return fail("q must be in [0, 1]", q);
    if (s->q >= 0 && q != s->q) return fail("q must be the same in every row", q);
    if (!(lo <= hi)) return fail("lo must not exceed hi", lo);
    if (count < 0) return fail("count must not be negative", static_cast<double>(count));
    s->q = q;
    auto [it, fresh] = s->by_edges[double_bits(lo)].try_emplace(double_bits(hi), QuantileState::Bucket{lo, hi, 0});
    it->second.count += count;
  });
}

// A value for the element `offset` of `count` in a bucket: spread evenly over its edges (the
// infinite edge of an outermost bucket is not used), so it is within the bucket's width of every
// element the bucket holds.
double within_bucket(const QuantileState::Bucket& b, int64_t offset) {
  if (b.lo == b.hi) return b.lo;
  if (std::isinf(b.hi)) return b.lo;
  if (std::isinf(b.lo)) return b.hi;
  return b.lo + (b.hi - b.lo) * ((static_cast<double>(offset) + 0.5) / static_cast<double>(b.count));
}

void quantile_final(sqlite3_context* ctx) {
  QuantileState* s = quantile_state(ctx, false);
  if (!s) return;  // no rows: NULL
  guarded(ctx, "distribution_quantile", [&] {
    if (s->failed) return;
    std::vector<QuantileState::Bucket> buckets;
    int64_t total = 0;
    for (const auto& [lo_bits, by_hi] : s->by_edges)
      for (const auto& [hi_bits, b] : by_hi)
        if (b.count > 0) buckets.push_back(b), total += b.count;
    if (total == 0) return;
    std::sort(buckets.begin(), buckets.end(),
              [](const auto& a, const auto& b) { return a.lo != b.lo ? a.lo < b.lo : a.hi < b.hi; });
    const PercentilePosition at = quantile_position(total, s->q);
    double value[2];
    const int64_t ranks[2] = {at.lower, at.upper};
    int64_t below = 0;
    size_t r = 0;
    for (const auto& b : buckets) {
      for (; r < 2 && ranks[r] < below + b.count; ++r) value[r] = within_bucket(b, ranks[r] - below);
      below += b.count;
    }
    sqlite3_result_double(ctx, percentile_blend(value[0], value[1], at.gamma));
  });
  delete s;
  *static_cast<QuantileState**>(sqlite3_aggregate_context(ctx, 0)) = nullptr;
}

}  // namespace

int register_distribution_functions(sqlite3* db) {
  int rc = sqlite3_create_function_v2(db, "tensor_percentile", 2, kScalarFlags, nullptr, percentile_fn, nullptr,
                                      nullptr, nullptr);
  if (rc == SQLITE_OK)
    rc = sqlite3_create_function_v2(db, "tensor_percentiles", 2, kScalarFlags, nullptr, percentiles_fn, nullptr,
                                    nullptr, nullptr);
  if (rc == SQLITE_OK)
    rc = sqlite3_create_function_v2(db, "distribution_quantile", 4, kScalarFlags, nullptr, nullptr, quantile_step,
                                    quantile_final, nullptr);
  return rc;
}

}  // namespace trialdb::sqlext
