// The bytes one read of a TrialSource answers: a buffer allocated for the length asked (never
// more than the file holds) and filled by the read itself.
//
// Why not std::string: std::string(n, '\0') zero-fills all n bytes before pread overwrites them,
// a second pass over every byte an ingest reads (3.6% of the instructions of the CNN profile's
// ingest). C++20 has no std::string that grows without initialising, so this
// allocates with make_unique_for_overwrite, which leaves the bytes as they are until written.
#pragma once
#include <cstddef>
#include <cstring>
#include <memory>
#include <string_view>

namespace trialdb {

class ReadBuffer {
 public:
  ReadBuffer() = default;
  // `size` bytes, not initialised: the caller fills them (and truncate()s to what it filled).
  explicit ReadBuffer(size_t size)
      : bytes_(size ? std::make_unique_for_overwrite<char[]>(size) : nullptr), size_(size) {}
  // A buffer holding a copy of `bytes` (bytes read some other way, e.g. an HTTP body).
  static ReadBuffer copy_of(std::string_view bytes) {
    ReadBuffer b(bytes.size());
    if (!bytes.empty()) std::memcpy(b.data(), bytes.data(), bytes.size());
    return b;
  }

  ReadBuffer(ReadBuffer&& other) noexcept : bytes_(std::move(other.bytes_)), size_(other.size_) { other.size_ = 0; }
  ReadBuffer& operator=(ReadBuffer&& other) noexcept {
    bytes_ = std::move(other.bytes_);
    size_ = other.size_;
    other.size_ = 0;
    return *this;
  }

  char* data() { return bytes_.get(); }
  const char* data() const { return bytes_.get(); }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  std::string_view view() const { return {bytes_.get(), size_}; }
  operator std::string_view() const { return view(); }  // NOLINT: read like the std::string it replaces

  // Keeps the first `size` bytes (at most size()): a read that filled fewer than it allocated.
  // The allocation stays: it was never larger than the file when the read began.
  void truncate(size_t size) {
    if (size < size_) size_ = size;
  }

 private:
  std::unique_ptr<char[]> bytes_;
  size_t size_ = 0;
};

}  // namespace trialdb
