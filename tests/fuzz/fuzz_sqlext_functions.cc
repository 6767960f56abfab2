// libFuzzer target: every sqlext SQL function (the rule_* helpers included) on arbitrary blobs and text.
//
// Input: byte 0 picks the call, byte 1 where to split the rest into ?1 and ?2; each is bound as
// a blob (and, for tensor_from_json and regexp, as text). Any outcome but a crash, a sanitizer
// report or an error without a message is fine.
#include <sqlite3.h>

#include <cstdint>
#include <cstring>
#include <iterator>

#include "sqlext/register.h"

namespace {

const char* const kCalls[] = {
    "SELECT tensor_dtype(?1), tensor_shape(?1), tensor_ndim(?1), tensor_numel(?1), tensor_bytes(?1)",
    "SELECT tensor_reduce(?1, 'sum'), tensor_reduce(?1, 'std', 1), tensor_reduce(?1, 'min'), tensor_reduce(?1, 'prod')",
    "SELECT tensor_reduce_axis(?1, 'mean', 0), tensor_reduce_axis(?1, 'max', -1)",
    "SELECT tensor_argmax(?1), tensor_argmax(?1, 0)",
    "SELECT tensor_json(?1), tensor_json(?1, 3)",
    "SELECT tensor_at(?1, 0), tensor_at(?1, -1), tensor_at(?1, 0, 0)",
    "SELECT tensor_count(?1, 'nan'), tensor_count(?1, '>', 0), tensor_count(?1, '=', 'a'), tensor_fraction(?1, "
    "'finite')",
    "SELECT tensor_percentile(?1, 50)",
    "SELECT tensor_histogram(?1, 4), tensor_histogram(?1, 3, -1, 1)",
    "SELECT tensor_allclose(?1, ?2), tensor_allclose(?2, ?1, 0.1, 0.1, 1), tensor_diff_norm(?1, ?2)",
    "SELECT tensor_map(?1, 'abs'), tensor_map(?1, '+', 1), tensor_map(?1, '<', 0)",
    "SELECT tensor_binop(?1, '*', ?2), tensor_binop(?2, '-', ?1)",
    "SELECT tensor_bincount(?1)",
    "SELECT tensor_sum(v), tensor_concat(v) FROM (SELECT ?1 v UNION ALL SELECT ?2)",
    "SELECT count(*), sum(value) FROM tensor_each(?1)",
    "SELECT tensor_from_json(tensor_json(?1), tensor_dtype(?1))",
    "SELECT tensor_json(tensor_from_json(CAST(?1 AS TEXT))), tensor_from_json(CAST(?1 AS TEXT), CAST(?2 AS TEXT))",
    "SELECT regexp(CAST(?1 AS TEXT), CAST(?2 AS TEXT))",
    "SELECT rule_inactive_units(?1, 0, NULL, 1), rule_inactive_units(?1, -1, 1, 50), rule_channel_sums(?1, 1), "
    "rule_channel_sums(?1, -1)",
    "SELECT count(*), sum(n), min(label), max(prediction) FROM rule_label_pairs(?1, ?2, 0)",
    "SELECT count(*), sum(n), min(label), max(prediction) FROM rule_label_pairs(?2, ?1, 1)",
    "SELECT rule_regexp_any(CAST(?1 AS TEXT), CAST(?2 AS TEXT)), rule_in_list(CAST(?2 AS TEXT), CAST(?1 AS TEXT)), "
    "rule_list_item(CAST(?1 AS TEXT), 1), rule_list_json(CAST(?1 AS TEXT)), rule_real(CAST(?2 AS TEXT)), "
    "rule_bool(CAST(?2 AS TEXT))",
};

sqlite3* open_db() {
  sqlite3* db = nullptr;
  sqlite3_open(":memory:", &db);
  trialdb_register_sql_functions(db);
  // Keep results (bincount of a huge value, concatenations) small enough for the fuzzer.
  sqlite3_limit(db, SQLITE_LIMIT_LENGTH, 1 << 20);
  return db;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static sqlite3* db = open_db();
  if (size < 2) return 0;
  const char* sql = kCalls[data[0] % std::size(kCalls)];
  size_t rest = size - 2;
  size_t split = rest ? (static_cast<size_t>(data[1]) * rest) / 255 : 0;
  const uint8_t* a = data + 2;
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v2(db, sql, -1, &st, nullptr) != SQLITE_OK) __builtin_trap();
  sqlite3_bind_blob(st, 1, a, static_cast<int>(split), SQLITE_STATIC);
  sqlite3_bind_blob(st, 2, a + split, static_cast<int>(rest - split), SQLITE_STATIC);
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW)
    for (int i = 0; i < sqlite3_column_count(st); ++i) sqlite3_column_blob(st, i);
  if (rc != SQLITE_DONE && std::strlen(sqlite3_errmsg(db)) == 0) __builtin_trap();
  sqlite3_finalize(st);
  return 0;
}
