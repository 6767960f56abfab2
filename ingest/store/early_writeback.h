// Starts the kernel's writeback of a database file's dirty pages early, on a thread of its own,
// so that a commit's fsync finds little left to write.
//
// Why: with a rollback journal (BulkLoad) every commit ends in an fsync of the database file,
// and the kernel starts writing dirty pages on its own only past its dirty thresholds
// (gigabytes), so each commit would wait for the device to write everything the transaction
// dirtied (bench/README.md, "Large-tensor ingest"). Asking for writeback every 20 ms
// (sync_file_range SYNC_FILE_RANGE_WRITE: start, do not wait) lets the device write while the
// ingest computes; the fsyncs still order and guarantee everything, they only find the work done.
//
// The descriptor is SQLite's own, found by the file's inode in /proc/self/fd: opening one of
// ours would not do, since closing any descriptor of a file drops every POSIX lock the process
// holds on it, SQLite's included. Linux only; elsewhere, or if the descriptor is not found,
// active() is false and nothing changes.
#pragma once
#include <condition_variable>
#include <mutex>
#include <thread>

#include "schema/database.h"

namespace trialdb {

class EarlyWriteback {
 public:
  explicit EarlyWriteback(Database& db);
  ~EarlyWriteback();  // stops the thread; the descriptor stays SQLite's
  EarlyWriteback(const EarlyWriteback&) = delete;
  EarlyWriteback& operator=(const EarlyWriteback&) = delete;

  bool active() const { return fd_ >= 0; }
  int descriptor() const { return fd_; }  // SQLite's, for tests

 private:
  void run();

  int fd_ = -1;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace trialdb
