#include "ingest/store/bulk_load.h"

#include <string>

#include "ingest/store/write_combining_vfs.h"
#include "schema/rollback_journal.h"

namespace trialdb {

BulkLoad::BulkLoad(Database& db) : db_(db) {
  // Otherwise the load goes through the WAL. FULL sync costs little here: the journal holds a
  // few pages per commit.
  active_ = leave_wal(db_);
  if (!active_) return;
  writeback_ = std::make_unique<EarlyWriteback>(db_);
  set_write_combining(db_.handle(), true);  // false (not through the shim): pages are written one by one
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
  return_to_wal(h);
}

}  // namespace trialdb
