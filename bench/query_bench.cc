// Questions answered from the statistics computed at ingest against the same answers recomputed
// from the value blobs, the way a user without them would (sqlext's functions):
//   mean-gradient COLLECTION  mean |x| of every tensor of the collection at every step: the
//                             reductions view vs tensor_reduce (the vanishing-gradient question)
//   distribution PATTERN      p5, p50, p95 and the fraction of zeros of every tensor LIKE PATTERN
//                             at every step: the distributions view vs tensor_percentile per p
//                             and tensor_fraction
//   heatmap TENSOR            what a heat map of one tensor over all steps is drawn from: the
//                             histogram_blobs view (what trialdb plot reads) vs
//                             tensor_histogram(value, 50, lo, hi) per step
// Checks the two answers agree (for the heat map: every step's element count; that pass also
// warms the page cache for both), then reports the median of N timed runs of each: prepare, step
// through every row reading every column, finalize.
//
//   query_bench DB TRIAL QUESTION ARG [--repeat N]
//   prints: rows=.. stats_ms=.. blobs_ms=.. max_rel_diff=..
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

struct Question {
  const char* name;
  const char* from_stats;   // timed
  const char* from_blobs;   // timed
  const char* check_stats;  // (tensor, step, worker, values...) compared with check_blobs
  const char* check_blobs;
};

constexpr const char* kMeanGradientStats = R"(
  SELECT r.tensor, r.step, r.worker, r.value
  FROM reductions AS r
  WHERE r.trial = ?1 AND r.reduction = 'mean' AND r.abs = 1
    AND r.tensor IN (SELECT tensor FROM collections WHERE trial = ?1 AND collection = ?2))";
constexpr const char* kMeanGradientBlobs = R"(
  SELECT v.tensor, v.step, v.worker, tensor_reduce(v.value, 'mean', 1)
  FROM tensor_values AS v
  WHERE v.trial = ?1 AND v.value IS NOT NULL
    AND v.tensor IN (SELECT tensor FROM collections WHERE trial = ?1 AND collection = ?2))";

constexpr const char* kDistributionStats = R"(
  SELECT tensor, step, worker, p5, p50, p95, 1.0 * zero / count
  FROM distributions
  WHERE trial = ?1 AND tensor LIKE ?2)";
constexpr const char* kDistributionBlobs = R"(
  SELECT tensor, step, worker, tensor_percentile(value, 5), tensor_percentile(value, 50),
         tensor_percentile(value, 95), tensor_fraction(value, 'zero')
  FROM tensor_values
  WHERE trial = ?1 AND tensor LIKE ?2 AND value IS NOT NULL)";

constexpr const char* kHeatmapStats = R"(
  SELECT step, buckets FROM histogram_blobs WHERE trial = ?1 AND tensor = ?2)";
constexpr const char* kHeatmapBlobs = R"(
  SELECT step, tensor_histogram(value, 50, r.lo, r.hi)
  FROM tensor_values,
       (SELECT min(p0) AS lo, max(p100) AS hi FROM distributions WHERE trial = ?1 AND tensor = ?2) AS r
  WHERE trial = ?1 AND tensor = ?2 AND value IS NOT NULL)";
constexpr const char* kHeatmapCheckStats = R"(
  SELECT '', step, '', sum(count) FROM histogram_buckets WHERE trial = ?1 AND tensor = ?2 GROUP BY step)";
constexpr const char* kHeatmapCheckBlobs = R"(
  SELECT '', step, '', (SELECT sum(c.value) FROM json_each(h, '$.counts') AS c)
  FROM (SELECT step, tensor_histogram(value, 50, r.lo, r.hi) AS h
        FROM tensor_values,
             (SELECT min(p0) AS lo, max(p100) AS hi FROM distributions WHERE trial = ?1 AND tensor = ?2) AS r
        WHERE trial = ?1 AND tensor = ?2 AND value IS NOT NULL))";

constexpr Question kQuestions[] = {
    {"mean-gradient", kMeanGradientStats, kMeanGradientBlobs, kMeanGradientStats, kMeanGradientBlobs},
    {"distribution", kDistributionStats, kDistributionBlobs, kDistributionStats, kDistributionBlobs},
    {"heatmap", kHeatmapStats, kHeatmapBlobs, kHeatmapCheckStats, kHeatmapCheckBlobs},
};

using Answer = std::map<std::tuple<std::string, int64_t, std::string>, std::vector<double>>;

sqlite3_stmt* prepare(sqlite3* db, const char* sql, const std::string& trial, const std::string& arg) {
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v2(db, sql, -1, &st, nullptr) != SQLITE_OK) {
    std::fprintf(stderr, "query_bench: %s\n", sqlite3_errmsg(db));
    return nullptr;
  }
  sqlite3_bind_text(st, 1, trial.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(st, 2, arg.c_str(), -1, SQLITE_TRANSIENT);
  return st;
}

// The whole answer, for the comparison of the two ways (not timed).
bool collect(sqlite3* db, const char* sql, const std::string& trial, const std::string& arg, Answer* out) {
  sqlite3_stmt* st = prepare(db, sql, trial, arg);
  if (!st) return false;
  out->clear();
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    auto text = [&](int c) { return std::string(reinterpret_cast<const char*>(sqlite3_column_text(st, c))); };
    std::vector<double>& values = (*out)[{text(0), sqlite3_column_int64(st, 1), text(2)}];
    for (int c = 3; c < sqlite3_column_count(st); ++c) values.push_back(sqlite3_column_double(st, c));
  }
  sqlite3_finalize(st);
  if (rc != SQLITE_DONE) std::fprintf(stderr, "query_bench: %s\n", sqlite3_errmsg(db));
  return rc == SQLITE_DONE;
}

// Timed: prepare, step through every row reading every column, finalize. What the client then
// does with the rows is left out, so it is the same (zero) for both ways.
bool timed(sqlite3* db, const char* sql, const std::string& trial, const std::string& arg, double* ms, size_t* rows) {
  auto t0 = std::chrono::steady_clock::now();
  sqlite3_stmt* st = prepare(db, sql, trial, arg);
  if (!st) return false;
  size_t n = 0, bytes = 0;
  double sum = 0;
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    for (int c = 0; c < sqlite3_column_count(st); ++c) {
      if (sqlite3_column_type(st, c) == SQLITE_TEXT) bytes += static_cast<size_t>(sqlite3_column_bytes(st, c));
      else sum += sqlite3_column_double(st, c);
    }
    ++n;
  }
  sqlite3_finalize(st);
  *ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  [[maybe_unused]] static volatile double sink;  // the reads above must not be optimised away
  sink = sum + static_cast<double>(bytes);
  *rows = n;
  if (rc != SQLITE_DONE) std::fprintf(stderr, "query_bench: %s\n", sqlite3_errmsg(db));
  return rc == SQLITE_DONE;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Largest relative difference between the answers, or -1 when their rows differ.
double max_relative_difference(const Answer& a, const Answer& b) {
  if (a.empty() || a.size() != b.size()) {
    std::fprintf(stderr, "query_bench: the answers differ in size (%zu from statistics, %zu from blobs)\n", a.size(),
                 b.size());
    return -1;
  }
  double max_rel = 0;
  for (const auto& [k, v] : a) {
    auto it = b.find(k);
    if (it == b.end() || it->second.size() != v.size()) {
      std::fprintf(stderr, "query_bench: %s step %lld missing from the blob answer\n", std::get<0>(k).c_str(),
                   static_cast<long long>(std::get<1>(k)));
      return -1;
    }
    for (size_t i = 0; i < v.size(); ++i)
      max_rel = std::max(max_rel, std::fabs(v[i] - it->second[i]) / std::max(1e-300, std::fabs(it->second[i])));
  }
  return max_rel;
}

}  // namespace

int main(int argc, char** argv) {
  const Question* q = nullptr;
  if (argc >= 5)
    for (const Question& k : kQuestions)
      if (std::strcmp(argv[3], k.name) == 0) q = &k;
  if (!q) {
    std::fprintf(stderr, "usage: query_bench DB TRIAL mean-gradient|distribution|heatmap ARG [--repeat N]\n");
    return 2;
  }
  const std::string trial = argv[2], arg = argv[4];
  int repeat = 5;
  for (int i = 5; i + 1 < argc; i += 2)
    if (std::strcmp(argv[i], "--repeat") == 0) repeat = std::max(1, std::atoi(argv[i + 1]));
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
  if (!collect(db, q->check_stats, trial, arg, &a) || !collect(db, q->check_blobs, trial, arg, &b)) return 1;
  const double max_rel = max_relative_difference(a, b);
  if (max_rel < 0) return 1;
  std::vector<double> t_stats, t_blobs;
  double ms;
  size_t rows = 0, blob_rows = 0;
  for (int r = 0; r < repeat; ++r) {
    if (!timed(db, q->from_stats, trial, arg, &ms, &rows)) return 1;
    t_stats.push_back(ms);
    if (!timed(db, q->from_blobs, trial, arg, &ms, &blob_rows)) return 1;
    t_blobs.push_back(ms);
  }
  std::printf("rows=%zu blob_rows=%zu stats_ms=%.3f blobs_ms=%.3f max_rel_diff=%.3g\n", rows, blob_rows,
              median(t_stats), median(t_blobs), max_rel);
  sqlite3_close(db);
  return 0;
}
