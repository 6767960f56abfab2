// A byte range of a local file mapped privately and writably (MAP_PRIVATE).
//
// Why: an event file's span of large tensors read with pread costs a copy out of the page cache
// plus a fault and a zeroed page for every 4 KiB of fresh buffer; mapped, the records are read
// where the page cache holds them. The ingester builds each blob's header in place just before
// its tensor_content, which copies only the page written (one per large record), never the file.
// A file that is not in the page cache is decoded while the kernel's readahead brings in the
// rest (madvise(WILLNEED) over the whole range measured no faster).
//
// The file must not shrink while mapped (a read past its new end is SIGBUS). smdebug only
// appends, and the range is clamped to the size the file has when mapped.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>

namespace trialdb {

class MappedRange {
 public:
  // [offset, offset + length) of the open file fd, clamped to file_size; nullptr when the range
  // is empty or the mapping fails (the caller reads the range instead).
  static std::unique_ptr<MappedRange> map(int fd, uint64_t offset, uint64_t length, uint64_t file_size);
  ~MappedRange();
  MappedRange(const MappedRange&) = delete;
  MappedRange& operator=(const MappedRange&) = delete;

  char* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  MappedRange(void* base, size_t mapped, char* data, size_t size)
      : base_(base), mapped_(mapped), data_(data), size_(size) {}
  void* base_;
  size_t mapped_;
  char* data_;
  size_t size_;
};

}  // namespace trialdb
