// Jobs 0, 1, 2, ... run on a few long-lived threads and are taken back in order: the ingest
// prepares file i + 1, i + 2, ... while its writer stores file i.
//
//   OrderedPool<PreparedFile> pool(files.size(), /*workers=*/2, /*window=*/{4, 64},
//                                  [&](size_t i) { return prepare_file(..., i, ...); },
//                                  [](const PreparedFile& f) { return f.bytes < (1 << 20); });
//   for (size_t i = 0; i < files.size(); ++i) store(pool.take(i));
//
// A worker starts job j only while j < i + window.any, i the job the consumer takes next, and
// while fewer than window.heavy jobs are started and not yet taken, a finished job whose result
// is light (the optional `light` function) not counting. So at most window.any jobs wait, in
// window.any slots whatever the number of jobs, and at most window.heavy of them are heavy: a
// trial that saves its big tensors every 16 steps and a loss every step has its next big file
// prepared while the writer stores this one, rather than only the small files between them. Jobs
// start in order, which the read-ahead budget (read_budget.h) relies on: job j's turn comes after
// job j - 1's. A job's exception is rethrown by take(). The threads live as long as the pool, so
// a trial of 1,000 small files starts two threads, not 1,000, and they never take a core from the
// consumer (yield_to_consumer below), whose thread is the pipeline's critical path. Where no
// thread can be had (a pids limit), take(i) runs job i itself.
//
// The destructor lets the running jobs finish and starts no more: whoever owns what the jobs wait
// on (the read-ahead budget) must release them first.
#pragma once
#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
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

// How far the workers may run ahead of the consumer (see above); heavy <= any.
struct PoolWindow {
  size_t heavy;
  size_t any;
};

template <typename Result>
class OrderedPool {
 public:
  OrderedPool(size_t jobs, size_t workers, PoolWindow window, std::function<Result(size_t)> job,
              std::function<bool(const Result&)> light = nullptr)
      : job_(std::move(job)),
        light_(std::move(light)),
        jobs_(jobs),
        heavy_(std::max<size_t>(window.heavy, 1)),
        slots_(std::max<size_t>(window.any, heavy_)) {
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
    Slot slot = std::exchange(waiting, Slot{});  // free for job i + window.any
    if (!slot.light) {
      --heavy_ahead_;
      startable_.notify_all();  // room for another heavy one
    }
    lock.unlock();
    if (slot.error) std::rethrow_exception(slot.error);
    return std::move(*slot.result);
  }

 private:
  struct Slot {
    std::optional<Result> result;
    std::exception_ptr error;
    bool finished = false;
    bool light = false;  // not counted in heavy_ahead_
  };

  void work() {
    yield_to_consumer();
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      startable_.wait(lock, [&] {
        return stopping_ || (next_ < jobs_ && next_ < wanted_ + slots_.size() && heavy_ahead_ < heavy_);
      });
      if (stopping_) return;
      const size_t j = next_++;
      ++heavy_ahead_;
      lock.unlock();
      Slot slot;
      try {
        slot.result.emplace(job_(j));
        slot.light = light_ && light_(*slot.result);
      } catch (...) {
        slot.error = std::current_exception();
      }
      slot.finished = true;
      lock.lock();
      slot_of(j) = std::move(slot);
      if (slot_of(j).light) {
        --heavy_ahead_;
        startable_.notify_all();  // room for another heavy one
      }
      done_.notify_all();
    }
  }

  // Job j's slot: jobs window apart share one, never both started and not taken.
  Slot& slot_of(size_t j) { return slots_[j % slots_.size()]; }

  // A worker woken because the consumer took a result (the window moved) would otherwise preempt
  // the consumer on its own core: under SCHED_BATCH a waking thread never preempts, so the
  // consumer, whose thread is the pipeline's critical path, keeps its core (bench/README.md,
  // "Preparing threads"). Where workers (and the helpers a job starts, which inherit it)
  // outnumber the cores, a lower priority leaves the consumer its core's time rather than a
  // share of it (kWorkerNiceIncrement more than the consumer's nice value; under autogroup
  // scheduling it weighs only against this process). Only hints: where a policy is not offered,
  // nothing changes.
  static constexpr int kWorkerNiceIncrement = 10;
  static constexpr int kLowestPriorityNice = 19;
  static void yield_to_consumer() {
#ifdef SCHED_BATCH
    sched_param normal{};
    normal.sched_priority = 0;
    pthread_setschedparam(pthread_self(), SCHED_BATCH, &normal);
#endif
    const auto self = static_cast<id_t>(gettid());
    errno = 0;  // getpriority may return -1, a nice value
    const int nice = getpriority(PRIO_PROCESS, self);
    if (errno == 0) setpriority(PRIO_PROCESS, self, std::min(nice + kWorkerNiceIncrement, kLowestPriorityNice));
  }

  std::function<Result(size_t)> job_;
  std::function<bool(const Result&)> light_;
  std::mutex mu_;
  std::condition_variable startable_, done_;
  const size_t jobs_;
  const size_t heavy_;
  std::vector<Slot> slots_;  // one per job of the window (window.any)
  size_t heavy_ahead_ = 0;   // jobs started and not taken, less the finished light ones
  size_t next_ = 0;          // the next job to start
  size_t wanted_ = 0;        // the job the consumer takes next
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace trialdb
