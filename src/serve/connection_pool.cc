// connection_pool.h
#include "src/serve/connection_pool.h"

namespace trialdb::serve {

ConnectionPool::ConnectionPool(const std::vector<std::string>& paths, size_t size) {
  for (size_t i = 0; i < size; ++i) free_.push_back(std::make_unique<ReadConnection>(paths));
}

ConnectionPool::Lease ConnectionPool::borrow() {
  std::unique_lock lock(mutex_);
  returned_.wait(lock, [this] { return !free_.empty(); });
  std::unique_ptr<ReadConnection> c = std::move(free_.back());
  free_.pop_back();
  return Lease(this, std::move(c));
}

std::optional<ConnectionPool::Lease> ConnectionPool::try_borrow() {
  std::lock_guard lock(mutex_);
  if (free_.empty()) return std::nullopt;
  std::unique_ptr<ReadConnection> c = std::move(free_.back());
  free_.pop_back();
  return Lease(this, std::move(c));
}

ConnectionPool::Lease::~Lease() {
  if (!c_) return;
  {
    std::lock_guard lock(pool_->mutex_);
    pool_->free_.push_back(std::move(c_));
  }
  pool_->returned_.notify_one();
}

}  // namespace trialdb::serve
