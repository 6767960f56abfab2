// reduction_lines.h
#include "schema/reduction_lines.h"

#include <algorithm>
#include <cmath>
#include <exception>
#include <limits>
#include <string_view>

#include "schema/case_folding.h"
#include "schema/database.h"
#include "schema/reduction_kinds.h"
#include "schema/step_finder.h"

namespace trialdb {

namespace {

// One tensor's value rows of kind (idx, abs), in key order (step, then worker), each handed to
// the row function with the sink bound as ?5 (the statement's one result row only counts them):
// a row returned to the caller would cost a sqlite3_step and a column call per value, about a
// third of reading it (bench/README.md, "trialdb serve"). The tensor is one lookup; whether the
// row's global step is a complete step of the trial, and its mode, are looked up in memory by the
// sink (the view joins the step row and compares with complete_through on every row). Without a
// step range, no bound is compared on every row. The view's value expression is folded for the
// kind (case_folding.h): what is left is the test of v.red_src and the kind's column.
std::string values_sql(sqlite3* db, const std::string& schema, int64_t idx, bool abs, bool ranged) {
  return std::string("SELECT count(") + kRowFunction + "(?5, v.tensor_step, v.step_offset,\n" + "       " +
         fold_constant_cases(db, reduction_value_sql(idx, abs)) +
         "))\n"
         "FROM " +
         schema +
         ".tensor tn\n"
         "JOIN " +
         schema + ".value v ON v.tensor_id = tn.tensor_id" + (ranged ? " AND v.tensor_step BETWEEN ?3 AND ?4" : "") +
         "\n"
         "WHERE tn.trial_id = ?1 AND tn.name = ?2 AND (" +
         reduction_filter_sql(idx, abs) + ")";
}

// Where the row function puts a tensor's rows: the caller's on_row, for the complete steps.
struct RowSink {
  const std::vector<int64_t>* steps = nullptr;
  const std::vector<size_t>* step_modes = nullptr;
  StepFinder* finder = nullptr;
  const std::function<void(const ReductionRow&)>* on_row = nullptr;
  size_t tensor = 0;
  int64_t last_step = std::numeric_limits<int64_t>::min(), last_offset = 0;
  std::exception_ptr failed;  // on_row's exception, thrown again once SQLite has stopped
};

constexpr const char* kSinkType = "trialdb_reduction_sink";

// kRowFunction(sink, tensor_step, step_offset, value): one value row to the sink bound to the
// statement; called otherwise (the SQL box), it fails.
void row_function(sqlite3_context* ctx, int, sqlite3_value** argv) {
  auto* sink = static_cast<RowSink*>(sqlite3_value_pointer(argv[0], kSinkType));
  if (!sink) {
    sqlite3_result_error(ctx, "trialdb_reduction_row is trialdb serve's own, for reading chart lines", -1);
    return;
  }
  const int64_t step = sqlite3_value_int64(argv[1]), offset = sqlite3_value_int64(argv[2]);
  // The sink merges a step's workers as they come: the rows must come in key order.
  if (step < sink->last_step || (step == sink->last_step && offset < sink->last_offset)) {
    sqlite3_result_error(ctx, "trialdb_reduction_row: the value rows did not come in step order", -1);
    return;
  }
  sink->last_step = step, sink->last_offset = offset;
  const size_t at = sink->finder->find(step + offset);
  if (at == sink->steps->size()) return;  // not a complete step: the view has no row either
  const double value = sqlite3_value_type(argv[3]) == SQLITE_NULL ? std::numeric_limits<double>::quiet_NaN()
                                                                  : sqlite3_value_double(argv[3]);
  try {
    (*sink->on_row)({sink->tensor, step, (*sink->step_modes)[at], value});
  } catch (...) {
    sink->failed = std::current_exception();
    sqlite3_result_error(ctx, "trialdb_reduction_row: reading the line failed", -1);
  }
}

}  // namespace

void register_reduction_row_function(sqlite3* db) {
  if (sqlite3_create_function_v2(db, kRowFunction, 4, SQLITE_UTF8 | SQLITE_DIRECTONLY, nullptr, row_function, nullptr,
                                 nullptr, nullptr) != SQLITE_OK)
    throw Error(Status::database(std::string("cannot register ") + kRowFunction + ": " + sqlite3_errmsg(db)));
}

bool read_reduction_lines(sqlite3* db, const std::string& schema, const std::string& trial,
                          const std::vector<std::string>& tensors, const std::string& reduction, bool abs, int64_t from,
                          int64_t to, std::vector<std::string>* modes,
                          const std::function<void(const ReductionRow&)>& on_row) {
  Statement t(db, "SELECT trial_id, complete_through FROM " + schema + ".trial WHERE name = ?1");
  t.bind(1, trial);
  if (!t.step()) return false;
  const int64_t trial_id = t.int64(0), complete_through = t.int64(1);

  // The trial's visible steps (global step -> mode), once, instead of a lookup per row.
  std::vector<int64_t> steps;
  std::vector<size_t> step_modes;
  Statement s(db, "SELECT step, mode FROM " + schema + ".step WHERE trial_id = ?1 AND step <= ?2 ORDER BY step");
  s.bind(1, trial_id).bind(2, complete_through);
  modes->clear();
  while (s.step()) {
    const std::string mode = s.text(1);
    auto it = std::find(modes->begin(), modes->end(), mode);
    if (it == modes->end()) it = modes->insert(modes->end(), mode);
    steps.push_back(s.int64(0));
    step_modes.push_back(static_cast<size_t>(it - modes->begin()));
  }

  Statement kind(db, "SELECT idx FROM " + schema + ".reduction_kind WHERE reduction = ?1 AND abs = ?2");
  kind.bind(1, reduction).bind(2, abs ? 1 : 0);
  if (!kind.step()) return true;  // no such reduction: the view has no rows either
  const bool ranged = from != std::numeric_limits<int64_t>::min() || to != std::numeric_limits<int64_t>::max();
  Statement v(db, values_sql(db, schema, kind.int64(0), abs, ranged));
  StepFinder finder(steps);
  RowSink sink;
  sink.steps = &steps, sink.step_modes = &step_modes, sink.finder = &finder, sink.on_row = &on_row;
  for (size_t i = 0; i < tensors.size(); ++i) {
    v.reset();
    sink.tensor = i;
    sink.last_step = std::numeric_limits<int64_t>::min();
    v.bind(1, trial_id).bind(2, tensors[i]);
    if (ranged) v.bind(3, from).bind(4, to);
    if (sqlite3_bind_pointer(v.handle(), 5, &sink, kSinkType, nullptr) != SQLITE_OK)
      throw Error(Status::database("cannot bind the reduction row sink"));
    try {
      v.step();
    } catch (const Error&) {
      if (sink.failed) std::rethrow_exception(sink.failed);
      throw;
    }
  }
  return true;
}

}  // namespace trialdb
