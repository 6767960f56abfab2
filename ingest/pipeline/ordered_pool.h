// Jobs 0, 1, 2, ... run on a few long-lived threads and are taken back in order: the ingest
// prepares file i + 1, i + 2, ... while its writer stores file i.
//
//   OrderedPool<PreparedFile> pool(files.size(), /*workers=*/2, /*window=*/4,
//                                  [&](size_t i) { return prepare_file(..., i, ...); });
//   for (size_t i = 0; i < files.size(); ++i) store(pool.take(i));
//
// A worker starts job j only while j < i + window, i the job the consumer takes next, so at most
// `window` (>= 1) jobs are started and not yet taken, and their results wait in `window` slots
// whatever the number of jobs. Jobs start in order, which the read-ahead budget (read_budget.h)
// relies on: job j's turn comes after job j - 1's. A job's exception is rethrown by take(). The
// threads live as long as the pool, so a trial of 1,000 small files starts two threads, not 1,000,
// and they never preempt the consumer (yield_to_consumer below), whose thread is the pipeline's
// critical path. Where no thread can be had (a pids limit), take(i) runs job i itself.
//
// The destructor lets the running jobs finish and starts no more: whoever owns what the jobs wait
// on (the read-ahead budget) must release them first.
#pragma once
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <condition_variable>
#include <cstddef>
#include <exception>
#include <functional>
#include <mutex>
#include <optional>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

namespace trialdb {

template <typename Result>
class OrderedPool {
 public:
  OrderedPool(size_t jobs, size_t workers, size_t window, std::function<Result(size_t)> job)
      : job_(std::move(job)), jobs_(jobs), slots_(std::max<size_t>(window, 1)) {
    workers = std::min(workers, jobs);
    try {
      for (size_t w = 0; w < workers; ++w) threads_.emplace_back([this] { work(); });
    } catch (const std::system_error&) {  // fewer threads: take() runs what nobody started
    }
  }
  OrderedPool(const OrderedPool&) = delete;
  OrderedPool& operator=(const OrderedPool&) = delete;
  ~OrderedPool() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopping_ = true;
    }
    startable_.notify_all();
    for (auto& t : threads_) t.join();
  }

  // Job i's result, once it has run; i must be taken in order, each once.
  Result take(size_t i) {
    std::unique_lock<std::mutex> lock(mu_);
    wanted_ = i;
    startable_.notify_all();  // the window moved
    if (next_ == i) {         // nobody started it: run it here
      ++next_;
      lock.unlock();
      return job_(i);
    }
    Slot& waiting = slot_of(i);
    done_.wait(lock, [&] { return waiting.finished; });
    Slot slot = std::exchange(waiting, Slot{});  // free for job i + window
    lock.unlock();
    if (slot.error) std::rethrow_exception(slot.error);
    return std::move(*slot.result);
  }

 private:
  struct Slot {
    std::optional<Result> result;
    std::exception_ptr error;
    bool finished = false;
  };

  void work() {
    yield_to_consumer();
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      startable_.wait(lock, [&] { return stopping_ || (next_ < jobs_ && next_ < wanted_ + slots_.size()); });
      if (stopping_) return;
      const size_t j = next_++;
      lock.unlock();
      Slot slot;
      try {
        slot.result.emplace(job_(j));
      } catch (...) {
        slot.error = std::current_exception();
      }
      slot.finished = true;
      lock.lock();
      slot_of(j) = std::move(slot);
      done_.notify_all();
    }
  }

  // Job j's slot: jobs window apart share one, never both started and not taken.
  Slot& slot_of(size_t j) { return slots_[j % slots_.size()]; }

  // A worker woken because the consumer took a result (the window moved) would otherwise preempt
  // the consumer on its own core: under SCHED_BATCH a waking thread never preempts, so the
  // consumer, whose thread is the pipeline's critical path, keeps its core (bench/README.md,
  // "Preparing threads"). Only a hint: where the policy is not offered, nothing changes.
  static void yield_to_consumer() {
#ifdef SCHED_BATCH
    sched_param normal{};
    normal.sched_priority = 0;
    pthread_setschedparam(pthread_self(), SCHED_BATCH, &normal);
#endif
  }

  std::function<Result(size_t)> job_;
  std::mutex mu_;
  std::condition_variable startable_, done_;
  const size_t jobs_;
  std::vector<Slot> slots_;  // one per job of the window
  size_t next_ = 0;          // the next job to start
  size_t wanted_ = 0;        // the job the consumer takes next
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace trialdb
