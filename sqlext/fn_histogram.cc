// The stored histograms (value_histogram.buckets, schema/histogram_blob.h) in plain SQL: what the
// histograms and histogram_buckets views are made of.
//   histogram_json(h)           the histogram blob h as the `histograms` view's JSON text,
//                               {"<first bucket>": [count, ...], ...}; NULL for NULL
//   histogram_of_element(x)     the histogram blob of a one-element value x: its bucket of the
//                               grid (kernels/bucket_grid.h), count 1; NULL unless x is finite
//   histogram_each(h)           a table-valued function: one row (bucket, lo, hi, count) per
//                               non-empty bucket of h, in bucket order, with the bucket's edges
// A blob that is not a histogram blob is an error naming what is wrong with it.
//
// Examples (tests/sqlext/test_doc_examples.py runs them on the fixture trial pt_bad_init):
//   sqlite> SELECT histogram_json(histogram_of_element(1.0)), histogram_json(histogram_of_element(-0.0));
//   {"130944":[1]}|{"0":[1]}
//   sqlite> SELECT bucket, lo, hi, count FROM histogram_each(histogram_of_element(1.5));
//   131008|1.4921875|1.5|1
//   sqlite> SELECT sum(e.count) = tensor_numel(v.value)
//      ...>   FROM histogram_blobs h, histogram_each(h.buckets) e
//      ...>   JOIN tensor_values v ON v.tensor = h.tensor AND v.step = h.step
//      ...>  WHERE h.tensor = 'Net_fc.bias' AND h.step = 0;
//   1
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "kernels/bucket_grid.h"
#include "kernels/bucket_runs.h"
#include "schema/histogram_blob.h"
#include "sqlext/table_function.h"
#include "sqlext/tensor_arg.h"

namespace trialdb::sqlext {

namespace {

std::string_view blob_arg(sqlite3_value* v) {
  return {static_cast<const char*>(sqlite3_value_blob(v)), static_cast<size_t>(sqlite3_value_bytes(v))};
}

void json_fn(sqlite3_context* ctx, int, sqlite3_value** argv) {
  if (sqlite3_value_type(argv[0]) == SQLITE_NULL) return sqlite3_result_null(ctx);
  if (sqlite3_value_type(argv[0]) != SQLITE_BLOB)
    return sqlite3_result_error(ctx, "histogram_json: argument 1 is not a histogram blob", -1);
  try {
    std::string text;
    if (const Status st = histogram_blob_json(blob_arg(argv[0]), &text); !st.is_ok())
      return sqlite3_result_error(ctx, ("histogram_json: argument 1: " + st.cause()).c_str(), -1);
    sqlite3_result_text64(ctx, text.data(), text.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
  } catch (const std::bad_alloc&) {
    sqlite3_result_error_nomem(ctx);
  }
}

void of_element_fn(sqlite3_context* ctx, int, sqlite3_value** argv) {
  const int type = sqlite3_value_type(argv[0]);
  if (type != SQLITE_INTEGER && type != SQLITE_FLOAT) return sqlite3_result_null(ctx);
  const double x = sqlite3_value_double(argv[0]);
  if (!std::isfinite(x)) return sqlite3_result_null(ctx);
  try {
    BucketRunWriter w;
    w.add(bucket_of(x), 1);
    const std::string blob = w.finish();
    sqlite3_result_blob64(ctx, blob.data(), blob.size(), SQLITE_TRANSIENT);
  } catch (const std::bad_alloc&) {
    sqlite3_result_error_nomem(ctx);
  }
}

enum Column { kColBucket = 0, kColLo, kColHi, kColCount, kColHistogram };

struct EachCursor {
  sqlite3_vtab_cursor base;  // first: SQLite casts between the two
  std::vector<std::pair<int64_t, uint64_t>> buckets;
  size_t i = 0;
};

int each_filter(sqlite3_vtab_cursor* cur, int idx_num, const char*, int argc, sqlite3_value** argv) {
  auto* c = reinterpret_cast<EachCursor*>(cur);
  c->i = 0;
  c->buckets.clear();
  if (idx_num == 0 || argc < 1) {
    cur->pVtab->zErrMsg =
        sqlite3_mprintf("histogram_each: missing the histogram argument, as in histogram_each(buckets)");
    return SQLITE_ERROR;
  }
  if (sqlite3_value_type(argv[0]) == SQLITE_NULL) return SQLITE_OK;  // NULL: no rows
  if (sqlite3_value_type(argv[0]) != SQLITE_BLOB) {
    cur->pVtab->zErrMsg = sqlite3_mprintf("histogram_each: argument 1 is not a histogram blob");
    return SQLITE_ERROR;
  }
  try {
    if (const Status st = decode_histogram_blob(blob_arg(argv[0]), &c->buckets); !st.is_ok()) {
      cur->pVtab->zErrMsg = sqlite3_mprintf("histogram_each: argument 1: %s", st.cause().c_str());
      c->buckets.clear();
      return SQLITE_ERROR;
    }
  } catch (const std::bad_alloc&) {
    return SQLITE_NOMEM;
  }
  return SQLITE_OK;
}

int each_next(sqlite3_vtab_cursor* cur) {
  ++reinterpret_cast<EachCursor*>(cur)->i;
  return SQLITE_OK;
}

int each_eof(sqlite3_vtab_cursor* cur) {
  auto* c = reinterpret_cast<EachCursor*>(cur);
  return c->i >= c->buckets.size();
}

int each_column(sqlite3_vtab_cursor* cur, sqlite3_context* ctx, int col) {
  auto* c = reinterpret_cast<EachCursor*>(cur);
  const auto& [bucket, count] = c->buckets[c->i];
  switch (col) {
    case kColBucket: sqlite3_result_int64(ctx, bucket); break;
    case kColLo: sqlite3_result_double(ctx, bucket_lo(bucket)); break;
    case kColHi: sqlite3_result_double(ctx, bucket_hi(bucket)); break;
    case kColCount: sqlite3_result_int64(ctx, static_cast<sqlite3_int64>(count)); break;
    default: sqlite3_result_null(ctx); break;  // the argument is not kept
  }
  return SQLITE_OK;
}

int each_rowid(sqlite3_vtab_cursor* cur, sqlite3_int64* rowid) {
  *rowid = static_cast<sqlite3_int64>(reinterpret_cast<EachCursor*>(cur)->i);
  return SQLITE_OK;
}

struct Each {
  static constexpr const char* kDeclaration =
      "CREATE TABLE x(bucket INTEGER, lo REAL, hi REAL, count INTEGER, histogram HIDDEN)";
  static constexpr int kArgumentColumn = kColHistogram;
  static constexpr int kArgumentCount = 1;
  static constexpr int kOrderColumn = kColBucket;
  static constexpr double kCost = 100;
  using Cursor = EachCursor;
  static constexpr auto filter = each_filter;
  static constexpr auto next = each_next;
  static constexpr auto eof = each_eof;
  static constexpr auto column = each_column;
  static constexpr auto rowid = each_rowid;
};

const sqlite3_module kEachModule = table_function_module<Each>();

}  // namespace

int register_histogram_functions(sqlite3* db) {
  int rc =
      sqlite3_create_function_v2(db, "histogram_json", 1, kScalarFlags, nullptr, json_fn, nullptr, nullptr, nullptr);
  if (rc == SQLITE_OK)
    rc = sqlite3_create_function_v2(db, "histogram_of_element", 1, kScalarFlags, nullptr, of_element_fn, nullptr,
                                    nullptr, nullptr);
  if (rc == SQLITE_OK) rc = sqlite3_create_module(db, "histogram_each", &kEachModule, nullptr);
  return rc;
}

}  // namespace trialdb::sqlext
