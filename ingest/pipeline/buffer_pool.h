// Large byte buffers kept for reuse within an ingest pass: event-file spans and value blobs.
//
// Why: each span (up to a step's event file) and each large blob was fresh memory, and the
// kernel faults in and zeroes every 4 KiB page of it: 500,000 minor faults and ~25% of all CPU
// samples for 1 GB of large tensors (bench/README.md). A buffer of at least kMinBytes goes back
// here instead of to the allocator, up to a total the caller bounds, and keeps its size, so
// reusing it for a buffer of the same size needs neither faults nor zeroing. No buffer over half
// that total is kept: a pass's peak memory grows by at most the bound, and a huge tensor or
// span is not held while the next one is allocated beside it. Small buffers never come here:
// they live in the allocator's heap, which reuses them already.
#pragma once
#include <cstddef>
#include <map>
#include <mutex>
#include <string>

namespace trialdb {

class BufferPool {
 public:
  static constexpr size_t kMinBytes = size_t{256} << 10;

  explicit BufferPool(size_t max_pooled_bytes) : max_bytes_(max_pooled_bytes) {}

  // A pooled buffer whose capacity is at least `bytes` and at most twice that (so a span's buffer
  // is not spent on a blob), its contents unspecified; else an empty string. Thread-safe.
  std::string take(size_t bytes);
  // Keeps buf if it is large, not over half the bound, and there is room; otherwise frees it.
  // Thread-safe.
  void give(std::string&& buf);
  // Frees every pooled buffer (the end of a pass: memory is not held between passes).
  void clear();
  size_t pooled_bytes() const;

 private:
  mutable std::mutex mu_;
  std::multimap<size_t, std::string> free_;   // by capacity
  size_t max_bytes_, bytes_ = 0;
};

}  // namespace trialdb
