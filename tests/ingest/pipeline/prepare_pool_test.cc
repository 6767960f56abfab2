// PreparePool (ingest/pipeline/prepare_pool.h): files prepared on a fixed set of threads, handed
// to the writer in order, errors included; stop() with files left; no threads at all.
#include "ingest/pipeline/prepare_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>

namespace trialdb {
namespace {

TEST(PreparePool, ReusesItsThreadsAcrossFilesAndHandsThemOverInOrder) {
  std::mutex mu;
  std::set<std::thread::id> threads;
  PreparePool pool(50, 2, [&](size_t t) {
    {
      std::lock_guard<std::mutex> lock(mu);
      threads.insert(std::this_thread::get_id());
    }
    PreparedFile f;
    f.bytes = t;
    return f;
  });
  for (size_t i = 0; i < 50; ++i) {
    pool.allow(i + 4);
    EXPECT_EQ(pool.get(i).bytes, i);
  }
  pool.stop();
  EXPECT_LE(threads.size(), 2u);   // a thread per file would be 50
  EXPECT_EQ(threads.count(std::this_thread::get_id()), 0u);
}

TEST(PreparePool, AFileThatFailsThrowsWhenTheWriterGetsToIt) {
  PreparePool pool(5, 2, [](size_t t) -> PreparedFile {
    if (t == 3) throw std::runtime_error("file 3 is bad");
    return PreparedFile{};
  });
  pool.allow(5);
  for (size_t i = 0; i < 3; ++i) EXPECT_NO_THROW(pool.get(i));
  try {
    pool.get(3);
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), "file 3 is bad");
  }
  EXPECT_NO_THROW(pool.get(4));
}

TEST(PreparePool, StopsBeforeFilesNotAllowedYet) {
  std::atomic<size_t> started{0};
  {
    PreparePool pool(100, 3, [&](size_t) {
      ++started;
      return PreparedFile{};
    });
    pool.allow(5);
    pool.get(0);
    pool.stop();
  }
  EXPECT_GE(started.load(), 1u);
  EXPECT_LE(started.load(), 5u);
}

TEST(PreparePool, WithoutThreadsTheWriterPreparesEachFileItself) {
  std::set<std::thread::id> threads;
  PreparePool pool(3, 0, [&](size_t t) {
    threads.insert(std::this_thread::get_id());
    PreparedFile f;
    f.bytes = t * 10;
    return f;
  });
  pool.allow(3);
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(pool.get(i).bytes, i * 10);
  EXPECT_EQ(threads, std::set<std::thread::id>{std::this_thread::get_id()});
}

}  // namespace
}  // namespace trialdb
