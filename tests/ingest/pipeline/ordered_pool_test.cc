// OrderedPool (ingest/pipeline/ordered_pool.h): results come back in order whatever order the
// workers finish in, no more than `window` jobs run ahead of the consumer, a job's exception
// reaches the consumer, and a pool without threads or left early still works.
#include "ingest/pipeline/ordered_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <algorithm>
#include <chrono>
#include <memory>
#include <random>
#include <stdexcept>
#include <thread>
#include <vector>

namespace trialdb {
namespace {

// A few microseconds of varying work, so that workers finish out of order.
void busy(size_t i) { std::this_thread::sleep_for(std::chrono::microseconds((i * 7919) % 200)); }

TEST(OrderedPool, ResultsComeBackInOrder) {
  for (size_t workers : {1, 2, 3, 8}) {
    OrderedPool<size_t> pool(300, workers, 5, [](size_t i) {
      busy(i);
      return i * i;
    });
    for (size_t i = 0; i < 300; ++i) ASSERT_EQ(pool.take(i), i * i) << "workers " << workers;
  }
}

TEST(OrderedPool, NoMoreThanTheWindowRunsAheadOfTheConsumer) {
  constexpr size_t kWindow = 3;
  std::atomic<size_t> taken{0};
  std::atomic<size_t> worst{0};
  OrderedPool<int> pool(200, 4, kWindow, [&](size_t i) {
    // Job i starts only once the consumer wants job i - kWindow + 1 or a later one.
    const size_t wanted = taken.load();
    const size_t ahead = i - std::min(i, wanted);
    size_t seen = worst.load();
    while (ahead > seen && !worst.compare_exchange_weak(seen, ahead)) {
    }
    busy(i);
    return 0;
  });
  for (size_t i = 0; i < 200; ++i) {
    taken = i;
    pool.take(i);
    std::this_thread::sleep_for(std::chrono::microseconds(50));  // a slow consumer: workers wait for it
  }
  EXPECT_LT(worst.load(), kWindow);
  EXPECT_GT(worst.load(), 0u);  // the workers did run ahead
}

// A result that only copies (moving it copies too), holding a share of one token: the shares
// alive are the results the pool still holds.
struct HeldResult {
  std::shared_ptr<int> token;
  explicit HeldResult(std::shared_ptr<int> t) : token(std::move(t)) {}
  HeldResult(const HeldResult&) = default;
  HeldResult& operator=(const HeldResult&) = default;
};

TEST(OrderedPool, HoldsNoMoreResultsThanTheWindowWhateverTheJobs) {
  constexpr size_t kWindow = 4, kJobs = 500;
  auto token = std::make_shared<int>(0);
  long most = 0;
  {
    OrderedPool<HeldResult> pool(kJobs, 2, kWindow, [&](size_t) { return HeldResult(token); });
    for (size_t i = 0; i < kJobs; ++i) {
      HeldResult r = pool.take(i);
      most = std::max(most, token.use_count() - 2);                // less this test's and r's
      std::this_thread::sleep_for(std::chrono::microseconds(20));  // a slow consumer: the window fills
    }
  }
  EXPECT_GT(most, 0);                               // results did wait for the consumer
  EXPECT_LE(most, static_cast<long>(kWindow) + 2);  // the window's, and one in each worker's hands
  EXPECT_EQ(token.use_count(), 1);
}

TEST(OrderedPool, AJobsExceptionReachesTheConsumer) {
  std::atomic<bool> seven_ran{false};
  OrderedPool<int> pool(50, 2, 4, [&](size_t i) -> int {
    if (i == 7) {
      seven_ran = true;
      throw std::runtime_error("job 7 failed");
    }
    return static_cast<int>(i);
  });
  for (size_t i = 0; i < 7; ++i) EXPECT_EQ(pool.take(i), static_cast<int>(i));
  while (!seven_ran) std::this_thread::yield();  // a worker ran it: the exception crosses threads
  try {
    pool.take(7);
    FAIL() << "take(7) returned";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "job 7 failed");
  }
  EXPECT_EQ(pool.take(8), 8);  // the others are unaffected
}

TEST(OrderedPool, WithoutThreadsTheConsumerRunsEveryJob) {
  const auto consumer = std::this_thread::get_id();
  OrderedPool<bool> pool(20, 0, 4, [&](size_t) { return std::this_thread::get_id() == consumer; });
  for (size_t i = 0; i < 20; ++i) EXPECT_TRUE(pool.take(i));
}

TEST(OrderedPool, LeftEarlyItStartsNoMoreJobs) {
  std::atomic<size_t> ran{0};
  {
    OrderedPool<int> pool(1000, 2, 4, [&](size_t i) {
      busy(i);
      ++ran;
      return 0;
    });
    pool.take(0);
    pool.take(1);
  }
  EXPECT_LE(ran.load(), 2u + 4u);
}

}  // namespace
}  // namespace trialdb
