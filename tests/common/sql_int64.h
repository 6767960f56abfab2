// The first column of a query's first row as an integer (-1 when there is no row or the query
// fails), on a bare sqlite3 connection: the C++ tests' way to ask another connection.
#pragma once
#include <sqlite3.h>

#include <cstdint>

namespace trialdb::test {

inline int64_t sql_int64(sqlite3* db, const char* sql) {
  sqlite3_stmt* st = nullptr;
  int64_t n = -1;
  if (sqlite3_prepare_v2(db, sql, -1, &st, nullptr) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
    n = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  return n;
}

}  // namespace trialdb::test
