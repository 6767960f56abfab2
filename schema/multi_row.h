// The VALUES list of a statement that writes several rows at once: what a statement costs apart
// from its rows (running its program, resetting it) is then paid once for all of them.
#pragma once
#include <cstddef>
#include <string>

namespace trialdb {

// "(?1,?2,...,?k),(?k+1,...),...": `rows` rows of `params` parameters each.
inline std::string values_rows_sql(size_t rows, int params) {
  std::string sql;
  int n = 0;
  for (size_t i = 0; i < rows; ++i) {
    sql += i ? ",(" : "(";
    for (int k = 0; k < params; ++k) {
      sql += k ? ",?" : "?";
      sql += std::to_string(++n);
    }
    sql += ')';
  }
  return sql;
}

}  // namespace trialdb
