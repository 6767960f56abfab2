// LazyStatement: a statement prepared on its first use and kept for later calls. The rule
// runner's statements are prepared this way because preparing one can cost more than running it:
// the UPDATE of rule_progress compiles every rule's fold trigger, the owed-step queries run once
// per rule. A run that owes nothing prepares none of them; a runner called after every ingest
// batch prepares each once.
#pragma once
#include <memory>
#include <string>
#include <utility>

#include "schema/database.h"

namespace trialdb::rules {

class LazyStatement {
 public:
  LazyStatement(sqlite3* db, std::string sql) : db_(db), sql_(std::move(sql)) {}

  Statement& operator*() {
    if (!stmt_) stmt_ = std::make_unique<Statement>(db_, sql_);
    return *stmt_;
  }
  Statement* operator->() { return &**this; }

 private:
  sqlite3* db_;
  std::string sql_;
  std::unique_ptr<Statement> stmt_;
};

}  // namespace trialdb::rules
