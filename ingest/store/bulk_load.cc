#include "ingest/store/bulk_load.h"

#include <string>

#include "ingest/store/write_combining_vfs.h"

namespace trialdb {

namespace {
// Sets the journal mode (or, with nullptr, only asks) and answers the mode in force afterwards:
// "" on any error (SQLITE_BUSY when another connection holds the file), which leaves it unchanged.
std::string journal_mode(sqlite3* db, const char* set_to = nullptr) {
  try {
    Statement q(db, std::string("PRAGMA journal_mode") + (set_to ? std::string("=") + set_to : ""));
    return q.step() ? q.text(0) : "";
  } catch (const Error&) {
    return "";
  }
}
}  // namespace

BulkLoad::BulkLoad(Database& db) : db_(db) {
  sqlite3* h = db_.handle();
  const char* file = sqlite3_db_filename(h, "main");
  if (!file || !*file || !sqlite3_get_autocommit(h)) return;
  // Leaving WAL mode needs every other connection gone; a busy answer means one is there, and
  // is not worth waiting for: the load then goes through the WAL.
  sqlite3_busy_timeout(h, 0);
  const bool was_wal = journal_mode(h) == "wal";
  // TRUNCATE: no directory change per commit, as DELETE would make.
  active_ = was_wal && journal_mode(h, "TRUNCATE") == "truncate";
  sqlite3_busy_timeout(h, kBusyTimeoutMs);
  // NORMAL is safe against power loss only in WAL mode; with a rollback journal it is FULL,
  // which costs little here: the journal holds a few pages per commit.
  if (!active_) return;
  db_.exec("PRAGMA synchronous=FULL");
  writeback_ = std::make_unique<EarlyWriteback>(db_);
  set_write_combining(h, true);  // false (not through the shim): pages are written one by one
}

bool BulkLoad::in_effect() const { return active_ && journal_mode(db_.handle()) == "truncate"; }

BulkLoad::~BulkLoad() {
  if (!active_) return;
  writeback_.reset();
  sqlite3* h = db_.handle();
  // An open transaction (an exception on its way up) is rolled back first: the mode cannot
  // change inside one. Failing here leaves a rollback-mode file, which the next Database (or
  // the next load) returns to WAL; the data are whole either way.
  if (!sqlite3_get_autocommit(h)) sqlite3_exec(h, "ROLLBACK", nullptr, nullptr, nullptr);
  set_write_combining(h, false);
  journal_mode(h, "WAL");
  sqlite3_exec(h, "PRAGMA synchronous=NORMAL", nullptr, nullptr, nullptr);
}

}  // namespace trialdb
