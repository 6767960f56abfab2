// The reductions view's text taken apart (reduction_kinds.h).
#include "schema/reduction_kinds.h"

#include <string_view>
#include <utility>

#include "schema/case_folding.h"
#include "schema/database.h"

namespace trialdb {

namespace {

// The parts of `CREATE VIEW reductions AS SELECT <keys>, k.reduction, k.abs, CASE ... END AS
// value, <rest> FROM reduction_kind k CROSS JOIN <values> WHERE <filter>;` in schema.sql. The
// columns of <rest> are the value's (mode, global_step, ...) or, where they read k, the kind's.
struct ViewText {
  std::string keys, value, values, filter;
  std::vector<std::string> value_columns;  // of <rest>, whole ("<expression> AS <name>")
  std::vector<RestColumn> kind_columns;    // of <rest>, those reading the kind
};

constexpr std::string_view kView = "CREATE VIEW IF NOT EXISTS reductions AS\nSELECT ";
constexpr std::string_view kKindColumns = "k.reduction, k.abs,";
constexpr std::string_view kValueEnd = "END AS value,";
constexpr std::string_view kKinds = "\nFROM reduction_kind k\nCROSS JOIN ";
constexpr std::string_view kWhere = "\nWHERE ";

// A select list's columns at its top-level commas, each trimmed.
std::vector<std::string> split_columns(const std::string& list) {
  std::vector<std::string> columns;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i <= list.size(); ++i) {
    if (i < list.size() && list[i] == '(') ++depth;
    if (i < list.size() && list[i] == ')') --depth;
    if (i < list.size() && (list[i] != ',' || depth > 0)) continue;
    const size_t first = list.find_first_not_of(" \n", start);
    if (first < i) columns.push_back(list.substr(first, list.find_last_not_of(" \n", i - 1) + 1 - first));
    start = i + 1;
  }
  return columns;
}

const ViewText& view_text() {
  static const ViewText text = [] {
    const std::string_view ddl = schema_sql();
    const size_t view = ddl.find(kView);
    const size_t kind = ddl.find(kKindColumns, view);
    const size_t value = ddl.find("CASE", kind);
    const size_t value_end = ddl.find(kValueEnd, value);
    const size_t kinds = ddl.find(kKinds, value_end);
    const size_t filter = ddl.find(kWhere, kinds);
    const size_t end = ddl.find(';', filter);
    for (const size_t at : {view, kind, value, value_end, kinds, filter, end})
      if (at == ddl.npos)
        throw Error(Status::database(
            "schema.sql: the reductions view is not 'SELECT <keys>, k.reduction, k.abs, CASE ... END AS value, <rest> "
            "FROM reduction_kind k CROSS JOIN <values> WHERE <filter>;'"));
    const auto part = [&](size_t from, size_t to) { return std::string(ddl.substr(from, to - from)); };
    const size_t keys = view + kView.size();
    ViewText text{part(keys, kind),
                  part(value, value_end + 3),
                  part(kinds + kKinds.size(), filter),
                  part(filter + kWhere.size(), end),
                  {},
                  {}};
    for (std::string& column : split_columns(part(value_end + kValueEnd.size(), kinds))) {
      const size_t as = column.rfind(" AS ");
      if (column.find("k.") == std::string::npos) text.value_columns.push_back(std::move(column));
      else if (as == std::string::npos)
        throw Error(Status::database("schema.sql: a column of the reductions view that reads the kind has no name"));
      else text.kind_columns.push_back({column.substr(as + 4), column.substr(0, as)});
    }
    return text;
  }();
  return text;
}

std::string for_kind(std::string sql, int64_t idx, bool abs) {
  for (const auto& [column, value] : {std::pair<std::string, std::string>{"k.idx", std::to_string(idx)},
                                      std::pair<std::string, std::string>{"k.abs", abs ? "1" : "0"}})
    for (size_t at = sql.find(column); at != std::string::npos; at = sql.find(column, at + value.size()))
      sql.replace(at, column.size(), value);
  return sql;
}

}  // namespace

std::vector<ReductionKind> reduction_kinds(sqlite3* db) {
  std::vector<ReductionKind> kinds;
  for (Statement q(db, "SELECT idx, reduction, abs FROM reduction_kind ORDER BY idx"); q.step();)
    kinds.push_back({q.int64(0), q.text(1), q.int64(2) != 0});
  return kinds;
}

std::string reduction_value_sql(int64_t idx, bool abs) { return for_kind(view_text().value, idx, abs); }

std::string reduction_filter_sql(int64_t idx, bool abs) { return for_kind(view_text().filter, idx, abs); }

const std::vector<RestColumn>& reduction_kind_columns() { return view_text().kind_columns; }

std::string reduction_value_over_kind_sql() { return view_text().value; }

std::string reduction_filter_over_kind_sql() { return view_text().filter; }

std::string reduction_values_sql() { return view_text().values; }

std::string reduction_kind_column_sql(const std::string& name) {
  for (const RestColumn& c : view_text().kind_columns)
    if (c.name == name) return c.expression;
  throw Error(Status::database("schema.sql: the reductions view has no column " + name + " that reads the kind"));
}

std::string reductions_by_value_sql(const std::vector<ReductionKind>& kinds, sqlite3* db) {
  const ViewText& view = view_text();
  std::string sql = "SELECT " + view.keys;
  for (size_t i = 0; i < view.value_columns.size(); ++i) sql += (i ? ", " : "\n       ") + view.value_columns[i];
  for (const ReductionKind& k : kinds) {
    const std::string idx = std::to_string(k.idx);
    sql += ",\n       (" + reduction_filter_sql(k.idx, k.abs) + ") AS has_" + idx;
    const std::string value = reduction_value_sql(k.idx, k.abs);
    sql += ",\n       " + (db ? fold_constant_cases(db, value) : value) + " AS value_" + idx;
    for (const RestColumn& c : view.kind_columns)
      sql += ", " + for_kind(c.expression, k.idx, k.abs) + " AS " + c.name + "_" + idx;
  }
  return sql + "\nFROM " + view.values;
}

}  // namespace trialdb
