// Copies a database's WAL into the database file on a thread of its own, so a bulk writer
// keeps appending while the previous transactions are checkpointed.
//
// Why: with SQLite's automatic checkpoint the committing thread also copies every page from the
// WAL into the database (read, write, fsync), a large share of the writer's time for a trial of
// large tensors (bench/README.md, "Large-tensor ingest"). While a WalCheckpointer lives, the
// writer connection's automatic checkpoint is off; after each commit the writer calls
// after_commit(), which wakes the thread (a PASSIVE checkpoint: never blocks the writer or
// readers) and, if the WAL has grown past a bound because the thread fell behind, waits for its
// pass so the WAL can restart. The destructor waits for the pass asked for last and gives the
// writer its automatic checkpoint back.
// The ingester uses it when it writes through the WAL: always with --follow, and otherwise when
// another connection has the database open (else BulkLoad skips the WAL altogether).
#pragma once
#include <condition_variable>
#include <mutex>
#include <thread>

#include <sqlite3.h>

#include "schema/database.h"

namespace trialdb {

class WalCheckpointer {
 public:
  // Does nothing (active() false) unless db is a file database in WAL mode.
  explicit WalCheckpointer(Database& db);
  ~WalCheckpointer();
  WalCheckpointer(const WalCheckpointer&) = delete;
  WalCheckpointer& operator=(const WalCheckpointer&) = delete;

  bool active() const { return ckpt_ != nullptr; }
  void after_commit();

 private:
  static int on_wal_commit(void* self, sqlite3* db, const char* name, int frames);
  void run();

  Database& db_;
  sqlite3* ckpt_ = nullptr;  // the thread's own connection
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  int wal_frames_ = 0;    // WAL size after the writer's last commit (from the WAL hook)
  bool wanted_ = false;   // a pass is asked for
  bool running_ = false;  // a pass is under way
  bool stop_ = false;
  uint64_t passes_done_ = 0;
};

}  // namespace trialdb
