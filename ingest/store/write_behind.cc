#include "ingest/store/write_behind.h"

#include <sqlite3.h>

#include <algorithm>
#include <cstring>

namespace trialdb {

WriteBehind::WriteBehind(WriteFn write, void* ctx, int buffer_bytes, int buffers, int max_write)
    : write_(write), ctx_(ctx), buffer_bytes_(buffer_bytes), max_write_(max_write),
      buffers_(static_cast<size_t>(buffers)) {
  for (int i = 0; i < buffers; ++i) {
    buffers_[static_cast<size_t>(i)].bytes.resize(static_cast<size_t>(buffer_bytes));
    free_.push_back(i);
  }
  thread_ = std::thread([this] { run(); });
}

WriteBehind::~WriteBehind() {
  drain();
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  work_.notify_one();
  thread_.join();
}

int WriteBehind::write_in_pieces(const char* bytes, int n, int64_t offset) {
  int rc = SQLITE_OK;
  for (int at = 0; at < n && rc == SQLITE_OK; at += max_write_)
    rc = write_(ctx_, bytes + at, std::min(max_write_, n - at), offset + at);
  return rc;
}

void WriteBehind::submit_filling() {
  if (filling_ < 0) return;
  if (buffers_[static_cast<size_t>(filling_)].len > 0) {
    queued_.push_back(filling_);
    work_.notify_one();
  } else {
    free_.push_back(filling_);
  }
  filling_ = -1;
}

void WriteBehind::recycle(Buffer& b) {
  b.len = 0;
  b.runs.clear();
}

int WriteBehind::report_failure(std::unique_lock<std::mutex>& lock) {
  if (filling_ >= 0) {   // dropped with the rest
    recycle(buffers_[static_cast<size_t>(filling_)]);
    free_.push_back(filling_);
    filling_ = -1;
  }
  done_.wait(lock, [&] { return queued_.empty() && writing_ < 0; });
  const int rc = error_;
  error_ = SQLITE_OK;
  return rc;
}

int WriteBehind::append(const void* bytes, int n, int64_t offset) {
  std::unique_lock<std::mutex> lock(mu_);
  if (error_ != SQLITE_OK) return report_failure(lock);
  if (filling_ >= 0 && buffers_[static_cast<size_t>(filling_)].len + n > buffer_bytes_) submit_filling();
  if (n > buffer_bytes_) {   // larger than a buffer: after everything before it, on this thread
    submit_filling();
    done_.wait(lock, [&] { return queued_.empty() && writing_ < 0; });
    if (error_ != SQLITE_OK) return report_failure(lock);
    return write_in_pieces(static_cast<const char*>(bytes), n, offset);
  }
  if (filling_ < 0) {
    done_.wait(lock, [&] { return !free_.empty() || error_ != SQLITE_OK; });
    if (error_ != SQLITE_OK) return report_failure(lock);
    filling_ = free_.back();
    free_.pop_back();
  }
  Buffer& b = buffers_[static_cast<size_t>(filling_)];
  std::memcpy(b.bytes.data() + b.len, bytes, static_cast<size_t>(n));
  if (!b.runs.empty() && b.runs.back().offset + b.runs.back().len == offset) {
    b.runs.back().len += n;
  } else {
    b.runs.push_back({offset, b.len, n});
  }
  b.lo = b.len == 0 ? offset : std::min(b.lo, offset);
  b.hi = b.len == 0 ? offset + n : std::max(b.hi, offset + n);
  b.len += n;
  return SQLITE_OK;
}

bool WriteBehind::pending_overlaps(int64_t offset, int64_t n) {
  std::lock_guard<std::mutex> lock(mu_);
  auto overlaps = [&](int i) {
    if (i < 0) return false;
    const Buffer& b = buffers_[static_cast<size_t>(i)];
    if (b.len == 0 || offset >= b.hi || b.lo >= offset + n) return false;
    for (const Run& r : b.runs)
      if (offset < r.offset + r.len && r.offset < offset + n) return true;
    return false;
  };
  if (overlaps(filling_) || overlaps(writing_)) return true;
  for (int i : queued_)
    if (overlaps(i)) return true;
  return false;
}

int WriteBehind::drain() {
  std::unique_lock<std::mutex> lock(mu_);
  submit_filling();
  return report_failure(lock);   // SQLITE_OK when nothing failed
}

void WriteBehind::run() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    work_.wait(lock, [&] { return stop_ || !queued_.empty(); });
    if (queued_.empty()) return;   // stop_, and nothing left
    const int i = queued_.front();
    queued_.pop_front();
    Buffer& b = buffers_[static_cast<size_t>(i)];
    int rc = SQLITE_OK;
    if (error_ == SQLITE_OK) {   // after a failure nothing more is written
      writing_ = i;
      lock.unlock();
      for (size_t r = 0; r < b.runs.size() && rc == SQLITE_OK; ++r)
        rc = write_in_pieces(b.bytes.data() + b.runs[r].at, b.runs[r].len, b.runs[r].offset);
      lock.lock();
      writing_ = -1;
    }
    if (error_ == SQLITE_OK) error_ = rc;
    recycle(b);
    free_.push_back(i);
    done_.notify_all();
  }
}

}  // namespace trialdb
