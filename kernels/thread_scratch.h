// thread_scratch<T>(): the calling thread's T, leased from a process-wide pool, for the kernels'
// scratch that is costly to make anew (megabytes of zeroed counter tables, arrays grown to the
// largest value seen). The ingest's threads come and go: its preparing threads last a pass
// (`--follow` makes one every few seconds), the helpers that decode a large file one file. Made
// anew per thread, zeroing the counters was 16% of the CPU of ingesting the CNN profile when every
// file had a thread of its own (1,000 files). A thread leases a T from the pool when it first
// needs one and gives it back when it ends, so the next thread takes it as it is: a T must be
// clean between uses (the counters are cleared after every value). The pool holds at most as
// many of each T as ever ran at once.
#pragma once
#include <memory>
#include <mutex>
#include <vector>

namespace trialdb {

template <class T>
class ScratchPool {
 public:
  std::unique_ptr<T> take() {
    std::lock_guard lock(mutex_);
    if (free_.empty()) return std::make_unique<T>();
    std::unique_ptr<T> t = std::move(free_.back());
    free_.pop_back();
    return t;
  }
  void give(std::unique_ptr<T> t) {
    std::lock_guard lock(mutex_);
    free_.push_back(std::move(t));
  }

 private:
  std::mutex mutex_;
  std::vector<std::unique_ptr<T>> free_;
};

template <class T>
T& thread_scratch() {
  static auto* const pool = new ScratchPool<T>;  // never destroyed: threads may outlive main
  struct Lease {
    std::unique_ptr<T> scratch = pool->take();
    ~Lease() { pool->give(std::move(scratch)); }
  };
  thread_local Lease lease;
  return *lease.scratch;
}

}  // namespace trialdb
