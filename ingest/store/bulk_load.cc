#include "ingest/store/bulk_load.h"

#include <algorithm>
#include <string>

#include "ingest/store/write_combining_vfs.h"
#include "schema/rollback_journal.h"

namespace trialdb {

namespace {

// The page cache of a transaction that only appends: SQLite's default size, and at least enough
// pages for the paths from root to last leaf of every table a transaction appends to (a file of
// 64 KiB pages gets 4 MiB). Sizes from 256 KiB to 2 MiB measured alike (bench/README.md).
constexpr int64_t kAppendingCacheKiB = 2048;
constexpr int64_t kAppendingCachePages = 64;

}  // namespace

BulkLoad::BulkLoad(Database& db) : db_(db) {
  // Otherwise the load goes through the WAL. FULL sync costs little here: the journal holds a
  // few pages per commit.
  active_ = leave_wal(db_);
  if (!active_) return;
  writeback_ = std::make_unique<EarlyWriteback>(db_);
  set_write_combining(db_.handle(), true);  // false (not through the shim): pages are written one by one
  Statement page_size(db_.handle(), "PRAGMA page_size");
  if (page_size.step()) page_size_ = page_size.int64(0);
}

bool BulkLoad::in_effect() const { return active_ && journal_mode(db_.handle()) == "truncate"; }

void BulkLoad::size_cache(bool appending) {
  if (!active_) return;
  set_page_cache_kib(db_.handle(), appending && in_effect()
                                       ? std::max(kAppendingCacheKiB, kAppendingCachePages * page_size_ / 1024)
                                       : kPageCacheKiB);
}

BulkLoad::~BulkLoad() {
  if (!active_) return;
  writeback_.reset();
  sqlite3* h = db_.handle();
  // An open transaction (an exception on its way up) is rolled back first: the mode cannot
  // change inside one. Failing here leaves a rollback-mode file, which the next Database (or
  // the next load) returns to WAL; the data are whole either way.
  if (!sqlite3_get_autocommit(h)) sqlite3_exec(h, "ROLLBACK", nullptr, nullptr, nullptr);
  size_cache(false);
  set_write_combining(h, false);
  return_to_wal(h);
}

}  // namespace trialdb
