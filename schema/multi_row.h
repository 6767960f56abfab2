// Statements that write several rows at once: what a statement costs apart from its rows
// (running its program, resetting it) is then paid once for all of them.
#pragma once
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <utility>

#include "schema/database.h"

namespace trialdb {

// `rows` copies of one row's SQL, comma-separated: "(...),(...),...".
inline std::string repeated_rows_sql(const std::string& row, size_t rows) {
  std::string sql;
  sql.reserve(rows * (row.size() + 1));
  for (size_t i = 0; i < rows; ++i) {
    if (i) sql += ',';
    sql += row;
  }
  return sql;
}

// "(?,?,...),(?,...),...": `rows` rows of `params` parameters each, numbered 1, 2, ... in order.
// A plain ? is numbered one after the parameter before it. Written as ?N instead, every parameter
// would be looked up in a list of the statement's numbered ones while SQLite codes it: quadratic
// in the parameters, and multi-row statements have a thousand (3% of ingesting a small trial).
inline std::string values_rows_sql(size_t rows, int params) {
  std::string row(1, '(');
  for (int k = 0; k < params; ++k) row += k ? ",?" : "?";
  row += ')';
  return repeated_rows_sql(row, rows);
}

// Rows written `batch_rows` a statement and the rest one a statement: two statements, the
// one-row one prepared at once, the batch one at the first full batch.
class BatchedRows {
 public:
  // sql(n): the statement that writes n rows.
  BatchedRows(sqlite3* db, size_t batch_rows, std::function<std::string(size_t)> sql)
      : db_(db), batch_rows_(batch_rows), sql_(std::move(sql)), single_(db, sql_(1)) {}

  // Writes rows 0..n-1: bind(statement, k, i) binds row i as the statement's k-th row.
  template <typename Bind>
  void write(size_t n, const Bind& bind) {
    size_t i = 0;
    for (; i + batch_rows_ <= n; i += batch_rows_) {
      if (!batch_) batch_.emplace(db_, sql_(batch_rows_));
      for (size_t k = 0; k < batch_rows_; ++k) bind(*batch_, k, i + k);
      batch_->run();
    }
    for (; i < n; ++i) {
      bind(single_, 0, i);
      single_.run();
    }
  }

 private:
  sqlite3* db_;
  size_t batch_rows_;
  std::function<std::string(size_t)> sql_;
  Statement single_;
  std::optional<Statement> batch_;
};

}  // namespace trialdb
