// `info --tensors` both ways, one line per tensor: from the tensors' summary
// (schema/tensor_summary.h) and from the aggregate over the public views it must equal
// (tests/common/tensor_listing.sql, whose path the test's CMakeLists gives as
// TRIALDB_TENSOR_LISTING_SQL); and the summary as stored, against what building it again from the
// values stores. For the tests of every writer that keeps the summary.
#pragma once
#include <sqlite3.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "schema/database.h"
#include "schema/tensor_summary.h"

namespace trialdb::test {

inline std::string listing_line(const std::vector<std::string>& cells) {
  std::string line;
  for (const std::string& c : cells) line += c + "|";
  return line;
}

inline std::string joined(const std::vector<std::string>& names) {
  std::string s;
  for (const std::string& n : names) s += (s.empty() ? "" : ",") + n;
  return names.empty() ? "NULL" : s;
}

inline std::vector<std::string> listing_from_summary(sqlite3* db) {
  std::vector<std::string> lines;
  for (const TensorSummary& s : read_tensor_summaries(db, ""))
    lines.push_back(listing_line(
        {s.trial, s.tensor, joined(s.dtypes), joined(s.shapes), std::to_string(s.steps), std::to_string(s.workers)}));
  return lines;
}

inline std::vector<std::string> listing_from_views(sqlite3* db) {
  std::ifstream in(TRIALDB_TENSOR_LISTING_SQL);
  std::stringstream sql;
  sql << in.rdbuf();
  std::vector<std::string> lines;
  Statement q(db, sql.str());
  while (q.step()) {
    std::vector<std::string> cells;
    for (int c = 0; c < sqlite3_column_count(q.handle()); ++c) cells.push_back(q.is_null(c) ? "NULL" : q.text(c));
    lines.push_back(listing_line(cells));
  }
  return lines;
}

// tensor.visible_steps and tensor_variant, every row as text.
inline std::vector<std::string> stored_summary(sqlite3* db) {
  std::vector<std::string> rows;
  for (const char* sql : {"SELECT 'steps', tensor_id, visible_steps FROM tensor ORDER BY tensor_id",
                          "SELECT 'variant', trial_id, tensor_id, dtype, quote(shape), worker_id, first_step "
                          "FROM tensor_variant ORDER BY trial_id, tensor_id, dtype, shape, worker_id"}) {
    Statement q(db, sql);
    while (q.step()) {
      std::vector<std::string> cells;
      for (int c = 0; c < sqlite3_column_count(q.handle()); ++c) cells.push_back(q.text(c));
      rows.push_back(listing_line(cells));
    }
  }
  return rows;
}

// What build_tensor_summaries stores for the database as it is (built inside a savepoint that is
// rolled back: the database is left as it was).
inline std::vector<std::string> rebuilt_summary(Database& db) {
  db.exec("SAVEPOINT rebuild");
  build_tensor_summaries(db);
  std::vector<std::string> rows = stored_summary(db.handle());
  db.exec("ROLLBACK TO rebuild");
  db.exec("RELEASE rebuild");
  return rows;
}

}  // namespace trialdb::test
