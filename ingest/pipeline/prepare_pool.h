// PreparePool: the threads that prepare a pass's files ahead of the writer. A fixed set of
// threads, each taking the next file in order, rather than a thread per file: what a thread sets
// up once (the distribution counters' tables, 2.5 MB zeroed per thread, schema/distribution.cc)
// is then paid once per pass, not once per file, which on a trial of many small files (a CNN
// saving every step: 1,000 files of 170 KB) was a fifth of the ingest's CPU time.
//
// Files are taken in index order, so the file the writer waits for is always taken before any
// later one (the read-ahead budget's turns rely on that, read_budget.h). Where no thread can be
// had (a pids limit), the writer prepares each file itself when it gets to it.
#pragma once
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

#include "ingest/pipeline/prepared_file.h"

namespace trialdb {

class PreparePool {
 public:
  // prepare(t) prepares file t of `files`, on up to `threads` threads.
  PreparePool(size_t files, size_t threads, std::function<PreparedFile(size_t)> prepare);
  ~PreparePool();   // stop()
  PreparePool(const PreparePool&) = delete;
  PreparePool& operator=(const PreparePool&) = delete;

  // Files [0, limit) may be started.
  void allow(size_t limit);
  // File t, once prepared (in order: t = 0, 1, ...); rethrows what preparing it threw.
  PreparedFile get(size_t t);
  // Starts no more files and waits for those being prepared.
  void stop();

 private:
  void work();

  std::function<PreparedFile(size_t)> prepare_;
  std::vector<std::promise<PreparedFile>> done_;
  std::vector<std::future<PreparedFile>> results_;
  std::vector<std::thread> threads_;
  std::mutex mu_;
  std::condition_variable cv_;
  size_t next_ = 0, allowed_ = 0;
  bool stopped_ = false;
};

}  // namespace trialdb
