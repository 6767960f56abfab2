// WriteBehind (ingest/store/write_behind.h): what a drain leaves in the file is exactly the appended
// writes applied in order, joined into fewer calls of at most max_write bytes; a failure is
// reported once and stops later writes; pending_overlaps tells which ranges are still in flight.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <random>
#include <string>

#include "ingest/store/write_behind.h"

using namespace trialdb;

namespace {

// An in-memory file: the writes WriteBehind performs, one call at a time.
struct FakeFile {
  std::mutex mu;
  std::string bytes;
  int calls = 0, max_call = 0;
  int64_t written = 0;
  int fail_at_call = -1;     // this call (0-based) and later ones fail
  bool gate_open = true;     // while false, writes wait
  std::condition_variable gate;

  static int write(void* ctx, const void* p, int n, int64_t off) {
    FakeFile* f = static_cast<FakeFile*>(ctx);
    std::unique_lock<std::mutex> lock(f->mu);
    f->gate.wait(lock, [&] { return f->gate_open; });
    if (f->fail_at_call >= 0 && f->calls >= f->fail_at_call) return SQLITE_IOERR_WRITE;
    ++f->calls;
    f->written += n;
    f->max_call = std::max(f->max_call, n);
    if (f->bytes.size() < static_cast<size_t>(off + n)) f->bytes.resize(static_cast<size_t>(off + n));
    f->bytes.replace(static_cast<size_t>(off), static_cast<size_t>(n), static_cast<const char*>(p),
                     static_cast<size_t>(n));
    return SQLITE_OK;
  }
  void set_gate(bool open) {
    {
      std::lock_guard<std::mutex> lock(mu);
      gate_open = open;
    }
    gate.notify_all();
  }
};

void apply(std::string* file, const std::string& w, int64_t off) {
  if (file->size() < static_cast<size_t>(off) + w.size()) file->resize(static_cast<size_t>(off) + w.size());
  file->replace(static_cast<size_t>(off), w.size(), w);
}

}  // namespace

TEST(WriteBehind, TheFileIsTheWritesInOrderJoinedIntoFewerCalls) {
  FakeFile f;
  std::string want;
  std::mt19937 rng(3);
  {
    WriteBehind wb(FakeFile::write, &f, 16 << 10, 3, 4 << 10);   // small buffers: many hand-overs
    int64_t next = 0;
    for (int i = 0; i < 3000; ++i) {
      std::string page(1024, static_cast<char>('a' + rng() % 26));
      int64_t off = next;
      switch (rng() % 8) {
        case 0: off = 1024 * (rng() % 200); break;   // a page written again, maybe still in flight
        case 1: page.assign(40 << 10, static_cast<char>('A' + rng() % 26)); break;   // larger than a buffer
        default: break;                              // the next page: joined
      }
      next = off + static_cast<int64_t>(page.size());
      ASSERT_EQ(wb.append(page.data(), static_cast<int>(page.size()), off), SQLITE_OK);
      apply(&want, page, off);
      if (i % 700 == 0) {
        ASSERT_EQ(wb.drain(), SQLITE_OK);
        std::lock_guard<std::mutex> lock(f.mu);
        ASSERT_TRUE(f.bytes == want) << "after append " << i;
      }
    }
    ASSERT_EQ(wb.drain(), SQLITE_OK);
  }
  EXPECT_TRUE(f.bytes == want);
  // One write per 1 KiB page would average 2.8 KiB a call here; joined, calls are 4 KiB but
  // for the runs a rewrite cuts short.
  EXPECT_GT(f.written / f.calls, 3584) << "consecutive pages were not joined (" << f.calls << " calls)";
  EXPECT_EQ(f.max_call, 4 << 10) << "a call larger than max_write";
}

TEST(WriteBehind, AFailureIsReportedOnceAndStopsLaterWrites) {
  FakeFile f;
  f.fail_at_call = 2;
  WriteBehind wb(FakeFile::write, &f, 4 << 10, 2, 4 << 10);
  std::string page(4 << 10, 'x');
  int rc = SQLITE_OK;
  for (int i = 0; i < 20 && rc == SQLITE_OK; ++i) rc = wb.append(page.data(), static_cast<int>(page.size()), i * 4096);
  if (rc == SQLITE_OK) rc = wb.drain();
  EXPECT_EQ(rc, SQLITE_IOERR_WRITE);
  {
    std::lock_guard<std::mutex> lock(f.mu);
    EXPECT_EQ(f.calls, 2);
    EXPECT_EQ(f.bytes.size(), 2u * 4096) << "a write after the failure reached the file";
  }
  EXPECT_EQ(wb.drain(), SQLITE_OK) << "the failure is reported once";
}

TEST(WriteBehind, PendingOverlapsIsTrueExactlyForBytesNotYetWritten) {
  FakeFile f;
  f.set_gate(false);
  WriteBehind wb(FakeFile::write, &f, 8 << 10, 4, 8 << 10);
  std::string page(4096, 'p');
  ASSERT_EQ(wb.append(page.data(), 4096, 0), SQLITE_OK);
  ASSERT_EQ(wb.append(page.data(), 4096, 4096), SQLITE_OK);       // joined: [0, 8192) queued next
  ASSERT_EQ(wb.append(page.data(), 4096, 65536), SQLITE_OK);      // a second run, still filling
  EXPECT_TRUE(wb.pending_overlaps(8191, 1));
  EXPECT_TRUE(wb.pending_overlaps(60000, 6000));
  EXPECT_FALSE(wb.pending_overlaps(8192, 4096));
  EXPECT_FALSE(wb.pending_overlaps(65536 + 4096, 100));
  f.set_gate(true);
  ASSERT_EQ(wb.drain(), SQLITE_OK);
  EXPECT_FALSE(wb.pending_overlaps(0, 1 << 20));
  std::lock_guard<std::mutex> lock(f.mu);
  EXPECT_EQ(f.bytes.substr(0, 8192), std::string(8192, 'p'));
  EXPECT_EQ(f.bytes.substr(65536), page);
}
