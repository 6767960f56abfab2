// Collects the writes of one file into large buffers and performs them on a thread of its own,
// in the order they were given, a write that continues the previous one joined to it (the
// write-combining VFS shim's engine). Scattered writes (B-tree pages) share a buffer too, so the
// threads meet once per buffer whatever the pattern.
//
// Why a thread: during a bulk load the writer thread bounds the ingest, and the kernel copying
// the joined writes into the page cache is a large part of its time. Here that copy runs beside
// SQLite's B-tree and record work instead of after it. The caller decides when
// writes must have landed (drain): before anything that could observe the file.
//
// A failed write is reported once, by the next append or drain, and the writes queued until then
// are dropped: SQLite, told of the failure, rolls the transaction back from its journal, and
// nothing of that transaction lands after the rollback's own writes.
#pragma once
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

namespace trialdb {

class WriteBehind {
 public:
  // write(ctx, bytes, n, offset) performs one write and returns an SQLite result code.
  using WriteFn = int (*)(void* ctx, const void* bytes, int n, int64_t offset);

  // Buffers of 1 MiB, so the two threads meet once per MiB, written in calls of at most
  // max_write bytes: SQLite's unix VFS writes at most 128 KiB - 1 bytes per call
  // (seekAndWriteFd masks the length with 0x1ffff), and 64 KiB calls already cost far less per
  // byte than 4 KiB ones (bench/README.md).
  WriteBehind(WriteFn write, void* ctx, int buffer_bytes = 1 << 20, int buffers = 4, int max_write = 64 << 10);
  ~WriteBehind();   // drains, then stops the thread
  WriteBehind(const WriteBehind&) = delete;
  WriteBehind& operator=(const WriteBehind&) = delete;

  // Queues [bytes, bytes + n) for offset: joined to the previous write when it continues it. May wait for a free buffer. Returns a failure not yet reported, if any, and
  // then has not queued this write.
  int append(const void* bytes, int n, int64_t offset);
  // Whether [offset, offset + n) overlaps bytes appended and not yet written: a read of a range
  // that does not can go ahead without a drain.
  bool pending_overlaps(int64_t offset, int64_t n);
  // Performs everything appended so far; returns (and forgets) a failure not yet reported.
  int drain();

 private:
  struct Run {       // bytes [at, at + len) of a buffer go to offset
    int64_t offset;
    int at, len;
  };
  struct Buffer {
    std::vector<char> bytes;
    int len = 0;
    std::vector<Run> runs;
    int64_t lo = 0, hi = 0;   // the file range its runs cover, for a quick overlap test
  };
  int write_in_pieces(const char* bytes, int n, int64_t offset);   // calls of at most max_write_
  void submit_filling();   // mu_ held
  static void recycle(Buffer& b);
  // Waits until the queue is empty (after a failure the thread drops what is queued), then
  // returns and forgets the failure, SQLITE_OK if none.
  int report_failure(std::unique_lock<std::mutex>& lock);
  void run();

  const WriteFn write_;
  void* const ctx_;
  const int buffer_bytes_, max_write_;
  std::vector<Buffer> buffers_;
  std::mutex mu_;
  std::condition_variable work_, done_;
  std::deque<int> queued_;       // buffer indexes, in write order
  std::vector<int> free_;
  int filling_ = -1;             // the buffer appends go to, -1 when none
  int writing_ = -1;             // the buffer the thread is writing, -1 when none
  bool stop_ = false;
  int error_ = 0;                // SQLITE_OK or the first failure
  std::thread thread_;
};

}  // namespace trialdb
