// /api/sql?q=...: one read-only statement (the connection's authorizer refuses anything else),
// with the trialdb functions, at most kSqlRowLimit rows and kSqlTimeLimitMs of running time.
#include <chrono>
#include <cctype>

#include "schema/database.h"
#include "src/serve/api.h"

namespace trialdb::serve {

namespace {

// Finalizes the statement whatever happens.
struct Finalizer {
  sqlite3_stmt* st = nullptr;
  ~Finalizer() { sqlite3_finalize(st); }
};

[[noreturn]] void fail(ReadConnection& c, int rc) {
  std::string why = sqlite3_errmsg(c.handle());
  if (rc == SQLITE_AUTH)
    why +=
        ": the SQL box only reads (no statement that writes, no ATTACH, no PRAGMA that sets anything, no "
        "transaction control, no load_extension)";
  else if (rc == SQLITE_INTERRUPT && c.deadline_passed())
    why = "the query ran longer than " + std::to_string(kSqlTimeLimitMs / 1000) + " s, the SQL box's time limit";
  throw Error(Status::invalid(why), rc);
}

}  // namespace

Json api_sql(ReadConnection& c, const Params& p) {
  const std::string sql = param(p, "q");
  if (sql.empty()) throw Error(ErrorKind::kInvalidInput, "parameter q (the SQL) is required");
  const auto started = std::chrono::steady_clock::now();
  c.set_time_limit(std::chrono::milliseconds(kSqlTimeLimitMs));
  Finalizer st;
  const char* tail = nullptr;
  int rc = sqlite3_prepare_v2(c.handle(), sql.c_str(), static_cast<int>(sql.size()), &st.st, &tail);
  if (rc != SQLITE_OK) fail(c, rc);
  if (st.st == nullptr) throw Error(ErrorKind::kInvalidInput, "no SQL statement in q");
  {
    Finalizer next;
    const char* rest = nullptr;
    rc = sqlite3_prepare_v2(c.handle(), tail, -1, &next.st, &rest);
    if (rc != SQLITE_OK || next.st != nullptr)
      throw Error(ErrorKind::kInvalidInput, "give one statement at a time (text follows the first one)");
  }
  if (!sqlite3_stmt_readonly(st.st)) throw Error(ErrorKind::kInvalidInput, "the SQL box only reads");
  const int n = sqlite3_column_count(st.st);
  Json columns = Json::array(), rows = Json::array();
  for (int i = 0; i < n; ++i) columns.push_back(sqlite3_column_name(st.st, i));
  bool cut = false;
  while ((rc = sqlite3_step(st.st)) == SQLITE_ROW) {
    if (rows.size() == kSqlRowLimit) {
      cut = true;
      break;
    }
    Json row = Json::array();
    for (int i = 0; i < n; ++i) row.push_back(column_json(st.st, i));
    rows.push_back(std::move(row));
  }
  if (rc != SQLITE_ROW && rc != SQLITE_DONE) fail(c, rc);
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
  return {{"columns", columns}, {"rows", rows}, {"cut", cut}, {"row_limit", kSqlRowLimit}, {"elapsed_ms", ms}};
}

}  // namespace trialdb::serve
