// What every table-valued function of the extension (tensor_each, histogram_each,
// rule_label_pairs) shares: an eponymous-only virtual table whose arguments are equality
// constraints on its hidden columns, its declaration, its cursors and its plan. A function gives
// the rest as a struct:
//   struct Function {
//     static constexpr const char* kDeclaration = "CREATE TABLE x(a, b, arg HIDDEN)";
//     static constexpr int kArgumentColumn = 2;  // the first hidden column
//     static constexpr int kArgumentCount = 1;   // hidden columns from there, one per argument
//     static constexpr int kOrderColumn = 0;     // rows come in ascending order of this column
//     static constexpr double kCost = 100;       // the plan's cost with the argument given
//     using Cursor = ...;                        // a struct whose first member is sqlite3_vtab_cursor base
//     static int filter(...), next(...), eof(...), column(...), rowid(...);  // sqlite3_module's
//   };
//   const sqlite3_module kModule = table_function_module<Function>();
#pragma once

#include <cstring>
#include <new>

#include "sqlext/sqlite_api.h"

namespace trialdb::sqlext {

inline int connect_table_function(sqlite3* db, const char* declaration, sqlite3_vtab** out) {
  int rc = sqlite3_declare_vtab(db, declaration);
  if (rc != SQLITE_OK) return rc;
  auto* vtab = static_cast<sqlite3_vtab*>(sqlite3_malloc(sizeof(sqlite3_vtab)));
  if (!vtab) return SQLITE_NOMEM;
  std::memset(vtab, 0, sizeof *vtab);
  sqlite3_vtab_config(db, SQLITE_VTAB_INNOCUOUS);
  *out = vtab;
  return SQLITE_OK;
}

inline int disconnect_table_function(sqlite3_vtab* vtab) {
  sqlite3_free(vtab);
  return SQLITE_OK;
}

// Every argument must be an equality constraint on its hidden column: without a usable one SQLite
// is asked for another plan, and without any the plan costs so much that SQLite avoids it (xFilter
// then gets idxNum 0 and reports the missing argument).
inline int best_index_of_table_function(sqlite3_index_info* info, int first_argument_column, int argument_count,
                                        int order_column, double cost) {
  unsigned given = 0;  // bit a: argument a has its constraint (argument_count <= 32)
  bool unusable = false;
  for (int k = 0; k < info->nConstraint; ++k) {
    const auto& c = info->aConstraint[k];
    const int arg = c.iColumn - first_argument_column;
    if (arg < 0 || arg >= argument_count || c.op != SQLITE_INDEX_CONSTRAINT_EQ) continue;
    if (!c.usable) {
      unusable = true;
      continue;
    }
    if (given & (1u << arg)) continue;  // one constraint per argument is passed; SQLite checks the rest
    given |= 1u << arg;
    info->aConstraintUsage[k].argvIndex = arg + 1;
    info->aConstraintUsage[k].omit = 1;
  }
  if (given != (1u << argument_count) - 1) {
    for (int k = 0; k < info->nConstraint; ++k) info->aConstraintUsage[k] = {0, 0};
    if (unusable) return SQLITE_CONSTRAINT;  // ask SQLite for another plan
    info->estimatedCost = 1e12;
    info->idxNum = 0;
    return SQLITE_OK;
  }
  info->estimatedCost = cost;
  info->idxNum = 1;
  if (info->nOrderBy == 1 && info->aOrderBy[0].iColumn == order_column && !info->aOrderBy[0].desc)
    info->orderByConsumed = 1;
  return SQLITE_OK;
}

template <class Function>
sqlite3_module table_function_module() {
  sqlite3_module m;
  std::memset(&m, 0, sizeof m);
  m.iVersion = 0;
  m.xCreate = nullptr;  // eponymous only: no CREATE VIRTUAL TABLE
  m.xConnect = [](sqlite3* db, void*, int, const char* const*, sqlite3_vtab** out, char**) {
    return connect_table_function(db, Function::kDeclaration, out);
  };
  m.xBestIndex = [](sqlite3_vtab*, sqlite3_index_info* info) {
    return best_index_of_table_function(info, Function::kArgumentColumn, Function::kArgumentCount,
                                        Function::kOrderColumn, Function::kCost);
  };
  m.xDisconnect = disconnect_table_function;
  m.xDestroy = disconnect_table_function;
  m.xOpen = [](sqlite3_vtab*, sqlite3_vtab_cursor** out) {
    auto* c = new (std::nothrow) typename Function::Cursor();
    if (!c) return SQLITE_NOMEM;
    *out = &c->base;
    return SQLITE_OK;
  };
  m.xClose = [](sqlite3_vtab_cursor* cur) {
    delete reinterpret_cast<typename Function::Cursor*>(cur);
    return SQLITE_OK;
  };
  m.xFilter = Function::filter;
  m.xNext = Function::next;
  m.xEof = Function::eof;
  m.xColumn = Function::column;
  m.xRowid = Function::rowid;
  return m;
}

}  // namespace trialdb::sqlext
