// Writes a bulk load through a rollback journal instead of the WAL, when no other connection
// has the database open.
//
// Why: in WAL mode every page is written twice (into the WAL, then by the checkpoint into the
// database) and read back once in between. A rollback journal keeps only the old content of
// pages that existed when a transaction began, so pages appended to the file, which is nearly
// all of a trial's blobs, are written once (bench/README.md, "Large-tensor ingest").
//
// The price is paid by readers: while a rollback-journal transaction holds the exclusive lock
// (from its first cache spill to its commit) a reader waits in its busy handler, where in WAL
// mode it would read the last commit; and a reader that holds a read transaction makes the
// writer wait. So the switch is made only when nobody else has the database open
// (schema/rollback_journal.h), and `ingest --follow`, whose readers query while it runs, never
// asks for it.
//
// The destructor returns the database to WAL mode. A process killed in between leaves a
// rollback-mode file with a hot journal: the next connection rolls the journal back, and the
// next Database returns the file to WAL. Another connection may also switch the file back to
// WAL mid-load (Database does on open); the writer then follows it, and the load goes on in
// WAL mode.
//
// While active, EarlyWriteback keeps the device writing beside the load, so each commit's fsync
// (which a rollback journal needs, and the WAL did not) finds little left to do.
#pragma once
#include <memory>

#include "schema/database.h"
#include "ingest/store/early_writeback.h"

namespace trialdb {

class BulkLoad {
 public:
  // Does nothing (active() false) unless db is a file database in WAL mode that no other
  // connection has open, and no transaction is open on db.
  explicit BulkLoad(Database& db);
  ~BulkLoad();
  BulkLoad(const BulkLoad&) = delete;
  BulkLoad& operator=(const BulkLoad&) = delete;

  bool active() const { return active_; }
  // Active, and no other connection had switched the file back to WAL when db's current or
  // last transaction began (a query: for decisions per commit, not per row).
  bool in_effect() const;

  // Sizes the connection's page cache for the rest of the open transaction: small when it only
  // appends (`appending`: none of its inserts lands out of its table's key order) and the load
  // is in effect, else the usual kPageCacheKiB, which the destructor also puts back.
  //
  // Why: a transaction that only appends never reads back a page it let go, so a large cache
  // only costs: its memory is faulted in page by page, and its dirty pages wait in it for the
  // commit, which then writes them all at once instead of as the load goes (bench/README.md,
  // "The page cache of a bulk load"). A transaction that inserts out of key order (into
  // value_by_step, kept row by row once value holds rows) comes back to its pages, and a small
  // cache would write and read each of them many times. In WAL mode (a load another connection
  // moved back to WAL) a page spilled and written again costs a rewrite of the WAL at commit.
  void size_cache(bool appending);

 private:
  Database& db_;
  bool active_ = false;
  int64_t page_size_ = 0;  // the file's
  std::unique_ptr<EarlyWriteback> writeback_;
};

}  // namespace trialdb
