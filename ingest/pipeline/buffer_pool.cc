#include "ingest/pipeline/buffer_pool.h"

#include <utility>

namespace trialdb {

std::string BufferPool::take(size_t bytes) {
  if (bytes < kMinBytes) return {};
  std::lock_guard<std::mutex> lock(mu_);
  auto it = free_.lower_bound(bytes);
  if (it == free_.end() || it->first / 2 > bytes) return {};
  std::string buf = std::move(it->second);
  bytes_ -= it->first;
  free_.erase(it);
  return buf;
}

void BufferPool::give(std::string&& buf) {
  std::string dropped = std::move(buf);   // freed on return unless pooled, outside the lock
  const size_t cap = dropped.capacity();
  if (cap < kMinBytes || cap > max_bytes_ / 2) return;
  std::lock_guard<std::mutex> lock(mu_);
  if (bytes_ + cap > max_bytes_) return;
  bytes_ += cap;
  free_.emplace(cap, std::move(dropped));
}

void BufferPool::clear() {
  std::multimap<size_t, std::string> freed;
  std::lock_guard<std::mutex> lock(mu_);
  freed.swap(free_);
  bytes_ = 0;
}

size_t BufferPool::pooled_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return bytes_;
}

}  // namespace trialdb
