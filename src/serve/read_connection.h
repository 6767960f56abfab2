// A connection for `trialdb serve`, safe to run a stranger's SQL on: the databases opened
// read-only (the first as main, the others ATTACHed as db1, db2, ...; the public views of all of
// them merged into TEMP views of the same names, so every query sees one set of trials),
// query_only, load_extension off, an authorizer that lets a statement read and nothing else
// (no ATTACH, no PRAGMA that sets anything, no transaction control), and a deadline checked by
// SQLite's progress handler so no statement runs longer than it is allowed.
#pragma once
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "schema/database.h"

namespace trialdb::serve {

// The public views merged across the databases (README "Public views"), rule_findings among
// them when a database has it.
const std::vector<std::string>& merged_views();

class ReadConnection {
 public:
  // Opens paths[0] and attaches the others; throws Error naming the file that fails.
  explicit ReadConnection(const std::vector<std::string>& paths);
  ~ReadConnection();
  ReadConnection(const ReadConnection&) = delete;
  ReadConnection& operator=(const ReadConnection&) = delete;

  sqlite3* handle() const { return db_->handle(); }
  // The databases' schema names: "main", then the ATTACHed ones ("db1", ...).
  const std::vector<std::string>& schemas() const { return schemas_; }
  // Whether some database has the view (rule_findings exists once `trialdb rules` ran).
  bool has_view(const std::string& name) const;
  // Statements run from now on are interrupted (SQLITE_INTERRUPT) once `limit` has passed.
  void set_time_limit(std::chrono::milliseconds limit);
  // The same deadline as `other` (a connection helping with its request).
  void share_deadline(const ReadConnection& other) { deadline_ = other.deadline_; }
  bool deadline_passed() const { return std::chrono::steady_clock::now() > deadline_; }

 private:
  static int on_progress(void* self);
  std::unique_ptr<Database> db_;
  std::vector<std::string> schemas_;
  std::vector<std::string> views_;
  std::chrono::steady_clock::time_point deadline_ = std::chrono::steady_clock::time_point::max();
};

}  // namespace trialdb::serve
