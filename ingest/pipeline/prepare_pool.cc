#include "ingest/pipeline/prepare_pool.h"

#include <algorithm>
#include <exception>
#include <system_error>
#include <utility>

namespace trialdb {

PreparePool::PreparePool(size_t files, size_t threads, std::function<PreparedFile(size_t)> prepare)
    : prepare_(std::move(prepare)), done_(files) {
  results_.reserve(files);
  for (auto& d : done_) results_.push_back(d.get_future());
  try {
    for (size_t i = 0; i < std::min(threads, files); ++i) threads_.emplace_back([this] { work(); });
  } catch (const std::system_error&) {   // fewer threads, or none: get() prepares what is left
  }
}

PreparePool::~PreparePool() { stop(); }

void PreparePool::allow(size_t limit) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    allowed_ = std::max(allowed_, std::min(limit, done_.size()));
  }
  cv_.notify_all();
}

void PreparePool::work() {
  for (;;) {
    size_t t;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return stopped_ || next_ < allowed_ || next_ == done_.size(); });
      if (stopped_ || next_ == done_.size()) return;
      t = next_++;
    }
    try {
      done_[t].set_value(prepare_(t));
    } catch (...) {
      done_[t].set_exception(std::current_exception());
    }
  }
}

PreparedFile PreparePool::get(size_t t) {
  if (threads_.empty()) {
    std::unique_lock<std::mutex> lock(mu_);
    if (next_ == t) {
      ++next_;
      lock.unlock();
      return prepare_(t);
    }
  }
  return results_[t].get();
}

void PreparePool::stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopped_ = true;
  }
  cv_.notify_all();
  for (auto& th : threads_)
    if (th.joinable()) th.join();
}

}  // namespace trialdb
