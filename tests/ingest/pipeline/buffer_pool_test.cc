// BufferPool (ingest/pipeline/buffer_pool.h): large buffers come back with their memory and size, small
// ones and ones far too large for the request do not, and the pooled total stays bounded.
#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "ingest/pipeline/buffer_pool.h"

using trialdb::BufferPool;

namespace {
constexpr size_t kMiB = size_t{1} << 20;
}

TEST(BufferPool, ALargeBufferComesBackWithItsMemoryAndSize) {
  BufferPool pool(64 * kMiB);
  std::string buf(4 * kMiB, 'x');
  const char* memory = buf.data();
  pool.give(std::move(buf));
  EXPECT_EQ(pool.pooled_bytes(), 4 * kMiB);
  std::string again = pool.take(4 * kMiB);
  EXPECT_EQ(again.data(), memory) << "not the pooled buffer";
  EXPECT_EQ(again.size(), 4 * kMiB) << "its size (so no zero-fill on reuse) was lost";
  EXPECT_EQ(pool.pooled_bytes(), 0u);
  EXPECT_TRUE(pool.take(4 * kMiB).empty()) << "handed out twice";
}

TEST(BufferPool, SmallBuffersAndMismatchedSizesAreNotPooled) {
  BufferPool pool(64 * kMiB);
  pool.give(std::string(BufferPool::kMinBytes - 1, 'x'));
  EXPECT_EQ(pool.pooled_bytes(), 0u);
  pool.give(std::string(16 * kMiB, 'x'));
  EXPECT_TRUE(pool.take(4 * kMiB).empty()) << "a 16 MiB buffer spent on a 4 MiB request";
  EXPECT_TRUE(pool.take(32 * kMiB).empty()) << "a buffer smaller than asked";
  EXPECT_TRUE(pool.take(1024).empty()) << "small requests never take pooled memory";
  EXPECT_GE(pool.take(10 * kMiB).capacity(), 10 * kMiB);
}

TEST(BufferPool, PooledTotalStaysUnderItsBoundAndClearFreesAll) {
  BufferPool pool(10 * kMiB);
  pool.give(std::string(6 * kMiB, 'x'));
  EXPECT_EQ(pool.pooled_bytes(), 0u) << "a buffer over half the bound was kept";
  for (int i = 0; i < 5; ++i) pool.give(std::string(4 * kMiB, 'x'));
  EXPECT_LE(pool.pooled_bytes(), 10 * kMiB);
  EXPECT_GE(pool.pooled_bytes(), 8 * kMiB);
  pool.clear();
  EXPECT_EQ(pool.pooled_bytes(), 0u);
  EXPECT_TRUE(pool.take(4 * kMiB).empty());
}

TEST(BufferPool, ThreadsGivingAndTakingKeepEveryBufferWhole) {
  BufferPool pool(256 * kMiB);
  std::vector<std::thread> threads;
  std::vector<int> bad(4, 0);
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        std::string b = pool.take(kMiB);
        b.assign(kMiB, static_cast<char>('a' + t));
        if (b.find_first_not_of(static_cast<char>('a' + t)) != std::string::npos) ++bad[t];
        pool.give(std::move(b));
      }
    });
  for (auto& th : threads) th.join();
  for (int t = 0; t < 4; ++t) EXPECT_EQ(bad[t], 0);
  EXPECT_LE(pool.pooled_bytes(), 4 * 2 * kMiB);
}
