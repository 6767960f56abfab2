// Every row of a list of queries as one string: each cell as text (NULL as "NULL") and "|", a line
// a row. The C++ tests' way to compare what whole tables or views hold.
#pragma once
#include <string>
#include <vector>

#include "schema/database.h"

namespace trialdb::test {

inline std::string rows_text(sqlite3* db, const std::vector<std::string>& sqls) {
  std::string out;
  for (const std::string& sql : sqls) {
    Statement q(db, sql);
    while (q.step()) {
      for (int c = 0; c < sqlite3_column_count(q.handle()); ++c) out += (q.is_null(c) ? "NULL" : q.text(c)) + "|";
      out += "\n";
    }
  }
  return out;
}

}  // namespace trialdb::test
