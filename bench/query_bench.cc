// The vanishing-gradient question: mean |gradient| of every gradient at every step, answered
// from the `reductions` view (computed at ingest) and, as the reference, recomputed from the
// value blobs with tensor_reduce. Checks both answers agree (that pass also warms the page
// cache for both), then reports the median of N timed runs of each.
//
//   query_bench DB TRIAL [--collection gradients] [--repeat N]
//   prints: rows=.. reductions_ms=.. blobs_ms=.. max_rel_diff=..
#include <sqlite3.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "sqlext/register.h"

namespace {

const char* kFromReductions = R"(
  SELECT r.tensor, r.step, r.worker, r.value
  FROM reductions AS r
  WHERE r.trial = ?1 AND r.reduction = 'mean' AND r.abs = 1
    AND r.tensor IN (SELECT tensor FROM collections WHERE trial = ?1 AND collection = ?2))";

const char* kFromBlobs = R"(
  SELECT v.tensor, v.step, v.worker, tensor_reduce(v.value, 'mean', 1)
  FROM tensor_values AS v
  WHERE v.trial = ?1 AND v.value IS NOT NULL
    AND v.tensor IN (SELECT tensor FROM collections WHERE trial = ?1 AND collection = ?2))";

using Answer = std::map<std::tuple<std::string, int64_t, std::string>, double>;

sqlite3_stmt* prepare(sqlite3* db, const char* sql, const std::string& trial, const std::string& coll) {
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v2(db, sql, -1, &st, nullptr) != SQLITE_OK) {
    std::fprintf(stderr, "query_bench: %s\n", sqlite3_errmsg(db));
    return nullptr;
  }
  sqlite3_bind_text(st, 1, trial.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(st, 2, coll.c_str(), -1, SQLITE_TRANSIENT);
  return st;
}

// The whole answer, for the comparison of the two ways (not timed).
bool collect(sqlite3* db, const char* sql, const std::string& trial, const std::string& coll, Answer* out) {
  sqlite3_stmt* st = prepare(db, sql, trial, coll);
  if (!st) return false;
  out->clear();
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    auto text = [&](int c) { return std::string(reinterpret_cast<const char*>(sqlite3_column_text(st, c))); };
    (*out)[{text(0), sqlite3_column_int64(st, 1), text(2)}] = sqlite3_column_double(st, 3);
  }
  sqlite3_finalize(st);
  if (rc != SQLITE_DONE) std::fprintf(stderr, "query_bench: %s\n", sqlite3_errmsg(db));
  return rc == SQLITE_DONE;
}

// Timed: prepare, step through every row reading all four columns, finalize. What the client
// then does with the rows is left out, so it is the same (zero) for both ways.
bool timed(sqlite3* db, const char* sql, const std::string& trial, const std::string& coll, double* ms,
           size_t* rows) {
  auto t0 = std::chrono::steady_clock::now();
  sqlite3_stmt* st = prepare(db, sql, trial, coll);
  if (!st) return false;
  size_t n = 0, bytes = 0;
  double sum = 0;
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    bytes += static_cast<size_t>(sqlite3_column_bytes(st, 0)) + static_cast<size_t>(sqlite3_column_bytes(st, 2));
    sum += sqlite3_column_double(st, 3) + static_cast<double>(sqlite3_column_int64(st, 1));
    ++n;
  }
  sqlite3_finalize(st);
  *ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  [[maybe_unused]] static volatile double sink;   // the reads above must not be optimised away
  sink = sum + static_cast<double>(bytes);
  *rows = n;
  if (rc != SQLITE_DONE) std::fprintf(stderr, "query_bench: %s\n", sqlite3_errmsg(db));
  return rc == SQLITE_DONE;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: query_bench DB TRIAL [--collection gradients] [--repeat N]\n");
    return 2;
  }
  std::string coll = "gradients";
  int repeat = 5;
  for (int i = 3; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--collection") == 0) coll = argv[i + 1];
    else if (std::strcmp(argv[i], "--repeat") == 0) repeat = std::max(1, std::atoi(argv[i + 1]));
  }
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(argv[1], &db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
    std::fprintf(stderr, "query_bench: cannot open %s: %s\n", argv[1], sqlite3_errmsg(db));
    return 1;
  }
  if (trialdb_register_sql_functions(db) != SQLITE_OK) {
    std::fprintf(stderr, "query_bench: cannot register the SQL functions\n");
    return 1;
  }
  Answer a, b;
  if (!collect(db, kFromReductions, argv[2], coll, &a) || !collect(db, kFromBlobs, argv[2], coll, &b)) return 1;
  if (a.empty() || a.size() != b.size()) {
    std::fprintf(stderr, "query_bench: the answers differ in size (%zu from reductions, %zu from blobs)\n", a.size(),
                 b.size());
    return 1;
  }
  double max_rel = 0;
  for (const auto& [k, v] : a) {
    auto it = b.find(k);
    if (it == b.end()) {
      std::fprintf(stderr, "query_bench: %s step %lld missing from the blob answer\n", std::get<0>(k).c_str(),
                   static_cast<long long>(std::get<1>(k)));
      return 1;
    }
    max_rel = std::max(max_rel, std::fabs(v - it->second) / std::max(1e-300, std::fabs(it->second)));
  }
  std::vector<double> t_red, t_blob;
  double ms;
  size_t rows;
  for (int r = 0; r < repeat; ++r) {
    if (!timed(db, kFromReductions, argv[2], coll, &ms, &rows)) return 1;
    if (rows != a.size()) return 1;
    t_red.push_back(ms);
    if (!timed(db, kFromBlobs, argv[2], coll, &ms, &rows)) return 1;
    if (rows != a.size()) return 1;
    t_blob.push_back(ms);
  }
  std::printf("rows=%zu reductions_ms=%.3f blobs_ms=%.3f max_rel_diff=%.3g\n", a.size(), median(t_red),
              median(t_blob), max_rel);
  sqlite3_close(db);
  return 0;
}
