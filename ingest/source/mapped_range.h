// A byte range of a local file mapped privately and writably (MAP_PRIVATE).
//
// Why: an event file's span of large tensors read with pread costs a copy out of the page cache
// plus a fault and a zeroed page for every 4 KiB of fresh buffer; mapped, the records are read
// where the page cache holds them. The ingester builds each blob's header in place just before
// its tensor_content, which copies only the page written (one per large record), never the file.
// A file that is not in the page cache is decoded while the kernel's readahead brings in the
// rest (asking for the whole range with madvise(WILLNEED) gains nothing: bench/README.md).
//
// A file that shrinks while mapped (smdebug only appends, but anyone may truncate a file) must
// not kill the process: a read of a page past the new end raises SIGBUS, which a process-wide
// handler answers by putting a page of zeros there. shrank() then tells the reader that what it
// read may be zeros rather than the file, so it reads the file again. Library code never installs
// a signal handler: the program does (the CLI's main), and until it has, nothing is mapped.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>

namespace trialdb {

class MappedRange {
 public:
  // Installs the SIGBUS handler (once; later calls do nothing). A SIGBUS outside a live mapping
  // goes to the handler installed before, or ends the process as it would have.
  static void install_sigbus_handler();

  // [offset, offset + length) of the open file fd, clamped to file_size; nullptr when the range
  // is empty, the mapping fails or the SIGBUS handler is not installed (the caller reads the
  // range instead). fd stays the caller's.
  static std::unique_ptr<MappedRange> map(int fd, uint64_t offset, uint64_t length, uint64_t file_size);
  ~MappedRange();
  MappedRange(const MappedRange&) = delete;
  MappedRange& operator=(const MappedRange&) = delete;

  char* data() const { return data_; }
  size_t size() const { return size_; }

  // Whether the file lost bytes of the range since it was mapped: a read past its end was
  // answered with zeros, or it is now shorter than the range (its last partial page reads as
  // zeros without any fault).
  bool shrank() const;

 private:
  MappedRange(void* base, size_t mapped, char* data, size_t size, int fd, uint64_t end, int slot)
      : base_(base), mapped_(mapped), data_(data), size_(size), fd_(fd), end_(end), slot_(slot) {}
  void* base_;
  size_t mapped_;
  char* data_;
  size_t size_;
  int fd_;        // our duplicate of the file's descriptor, for shrank()'s fstat
  uint64_t end_;  // offset + size in the file
  int slot_;      // in the SIGBUS handler's table of live mappings
};

}  // namespace trialdb
