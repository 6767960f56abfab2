// The read-ahead budget: bounds the event bytes that files being prepared hold ahead of the
// writer, so a trial of big tensors never has a window of them in memory at once. Files take
// their share in order: the file the writer waits for always gets its turn, and one larger than
// the limit runs alone.
#pragma once
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>

namespace trialdb {

class ReadBudget {
 public:
  explicit ReadBudget(uint64_t limit) : limit_(limit) {}

  // Waits for turn `ticket` (0, 1, 2, ... in order) and room for `bytes`, then takes them.
  void acquire(size_t ticket, uint64_t bytes) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return aborted_ || (next_ == ticket && (in_use_ == 0 || in_use_ + bytes <= limit_)); });
    in_use_ += bytes;
    ++next_;
    cv_.notify_all();
  }
  void release(uint64_t bytes) {
    std::lock_guard<std::mutex> lock(mu_);
    in_use_ -= bytes;
    cv_.notify_all();
  }
  // The writer stopped: nobody waits for a share any more.
  void abort() {
    std::lock_guard<std::mutex> lock(mu_);
    aborted_ = true;
    cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  uint64_t limit_, in_use_ = 0;
  size_t next_ = 0;
  bool aborted_ = false;
};

// One file's turn at the budget; a file that reads no event bytes passes its turn on.
class BudgetTurn {
 public:
  BudgetTurn(ReadBudget* budget, size_t ticket) : budget_(budget), ticket_(ticket) {}
  BudgetTurn(const BudgetTurn&) = delete;
  BudgetTurn& operator=(const BudgetTurn&) = delete;
  ~BudgetTurn() {
    if (!taken_) budget_->acquire(ticket_, 0);
  }
  void take(uint64_t bytes) {
    budget_->acquire(ticket_, bytes);
    taken_ = true;
  }

 private:
  ReadBudget* budget_;
  size_t ticket_;
  bool taken_ = false;
};

}  // namespace trialdb
