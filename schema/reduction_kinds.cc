// The reductions view's text taken apart (reduction_kinds.h).
#include "schema/reduction_kinds.h"

#include <string_view>

#include "schema/database.h"

namespace trialdb {

namespace {

// The parts of `CREATE VIEW reductions AS SELECT <keys>, k.reduction, k.abs, CASE ... END AS
// value, <rest> FROM reduction_kind k CROSS JOIN <values> WHERE <filter>;` in schema.sql.
struct ViewText {
  std::string keys, value, rest, values, filter;
};

constexpr std::string_view kView = "CREATE VIEW IF NOT EXISTS reductions AS\nSELECT ";
constexpr std::string_view kKindColumns = "k.reduction, k.abs,";
constexpr std::string_view kValueEnd = "END AS value,";
constexpr std::string_view kKinds = "\nFROM reduction_kind k\nCROSS JOIN ";
constexpr std::string_view kWhere = "\nWHERE ";

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
    return ViewText{part(keys, kind), part(value, value_end + 3), part(value_end + kValueEnd.size(), kinds),
                    part(kinds + kKinds.size(), filter), part(filter + kWhere.size(), end)};
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

std::string reductions_by_value_sql(const std::vector<ReductionKind>& kinds) {
  const ViewText& view = view_text();
  std::string sql = "SELECT " + view.keys + view.rest;
  for (const ReductionKind& k : kinds) {
    const std::string idx = std::to_string(k.idx);
    sql += ",\n       (" + reduction_filter_sql(k.idx, k.abs) + ") AS has_" + idx;
    sql += ",\n       " + reduction_value_sql(k.idx, k.abs) + " AS value_" + idx;
  }
  return sql + "\nFROM " + view.values;
}

}  // namespace trialdb
