// The reductions view's text in schema.sql taken apart, for code that reads reductions another
// way than through the view (charts: reduction_lines.h; the export: a row per value rather than
// per value and kind), so that what a reduction means is declared in the view only.
#pragma once
#include <sqlite3.h>

#include <cstdint>
#include <string>
#include <vector>

namespace trialdb {

struct ReductionKind {
  int64_t idx;            // reduction_kind.idx: the bit of value.red_mask
  std::string reduction;  // min, max, mean, ...
  bool abs;               // of |x|
};

// The kinds in reduction_kind, in idx order.
std::vector<ReductionKind> reduction_kinds(sqlite3* db);

// The view's value expression and its row filter over a value row `v`, for one kind: the kind's
// columns replaced by its values (SQLite still tests the branches this makes constant on every
// row; case_folding.h decides them once).
std::string reduction_value_sql(int64_t idx, bool abs);
std::string reduction_filter_sql(int64_t idx, bool abs);

// A column of the view, after value, that reads the kind (e.g. computed): its name and expression.
struct RestColumn {
  std::string name, expression;
};
const std::vector<RestColumn>& reduction_kind_columns();

// The view's value expression, its row filter and a kind column of reduction_kind_columns() (by
// name), as the view declares them: over a value row `v` and a reduction_kind row `k`, for SQL
// that joins the two itself (the rule views, rules_sql/rules_base.sql). Throws when the view has
// no such column.
std::string reduction_value_over_kind_sql();
std::string reduction_filter_over_kind_sql();
std::string reduction_kind_column_sql(const std::string& name);
// The view's values: its FROM clause after the kinds, the visible value rows `v` joined with their
// trial `t`, step `s`, tensor `tn` and worker `w`.
std::string reduction_values_sql();

// The reductions view with one row per value instead of one per value and kind: the view's
// columns that are the value's (trial, tensor, step, worker, mode, mode_step, global_step), then
// for each of `kinds` in order `has_<idx>` (1 when the value has the kind: the view has its row),
// `value_<idx>` (the view's value) and `<name>_<idx>` for each of reduction_kind_columns().
// Filtering it on trial and steps costs what the same filter on the view costs for one kind.
// With `db`, each kind's value expression is folded on it (case_folding.h), so that SQLite does
// not test the kind's constant branches on every row.
std::string reductions_by_value_sql(const std::vector<ReductionKind>& kinds, sqlite3* db = nullptr);

}  // namespace trialdb
