// OrderedPool (ingest/pipeline/ordered_pool.h): results come back in order whatever order the
// workers finish in, no more than `window` jobs run ahead of the consumer (light results not
// counting against its heavy part), a job's exception reaches the consumer, and a pool without
// threads or left early still works.
#include "ingest/pipeline/ordered_pool.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

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
    OrderedPool<size_t> pool(300, workers, {5, 5}, [](size_t i) {
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
  OrderedPool<int> pool(200, 4, {kWindow, kWindow}, [&](size_t i) {
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

// Every fourth job is heavy (a big file between small ones): the workers run past the light
// ones, further ahead than the heavy window, but never hold more heavy ones than it.
TEST(OrderedPool, LightResultsDoNotCountAgainstTheHeavyWindow) {
  constexpr size_t kHeavy = 2, kAny = 16, kJobs = 400, kEvery = 4;
  const auto heavy = [](size_t i) { return i % kEvery == 0; };
  std::atomic<size_t> taken{0};
  std::atomic<size_t> worst_ahead{0}, worst_heavy{0};
  const auto raise = [](std::atomic<size_t>& worst, size_t seen_now) {
    size_t seen = worst.load();
    while (seen_now > seen && !worst.compare_exchange_weak(seen, seen_now)) {
    }
  };
  OrderedPool<bool> pool(
      kJobs, 2, {kHeavy, kAny},
      [&](size_t i) {
        // The heavy jobs before this one not yet taken (the one the consumer is taking may be
        // counted: it can have left the pool before `taken` moves on).
        const size_t wanted = std::min(i, taken.load());
        size_t heavy_before = 0;
        for (size_t j = wanted; j < i; ++j) heavy_before += heavy(j);
        raise(worst_ahead, i - wanted);
        if (heavy(i)) raise(worst_heavy, heavy_before);
        busy(i);
        return heavy(i);
      },
      [](const bool& is_heavy) { return !is_heavy; });
  for (size_t i = 0; i < kJobs; ++i) {
    taken = i;
    EXPECT_EQ(pool.take(i), heavy(i));
    std::this_thread::sleep_for(std::chrono::microseconds(50));  // a slow consumer: workers wait for it
  }
  EXPECT_LE(worst_heavy.load(), kHeavy);  // kHeavy - 1 others started, and the one being taken
  EXPECT_GT(worst_ahead.load(), kHeavy);  // past light ones
  EXPECT_LT(worst_ahead.load(), kAny);
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
    OrderedPool<HeldResult> pool(kJobs, 2, {kWindow, kWindow}, [&](size_t) { return HeldResult(token); });
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
  OrderedPool<int> pool(50, 2, {4, 4}, [&](size_t i) -> int {
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

// The workers give way to the consumer: each runs at a nice value 10 above the thread that made
// the pool (19 at most), which the consumer's own jobs keep.
TEST(OrderedPool, WorkersRunAtALowerPriorityThanTheConsumer) {
  const auto priority = [] { return getpriority(PRIO_PROCESS, static_cast<id_t>(gettid())); };
  const int consumer_nice = priority();
  const auto consumer = std::this_thread::get_id();
  struct Ran {
    bool on_consumer;
    int nice;
  };
  OrderedPool<Ran> pool(8, 2, {4, 4}, [&](size_t) { return Ran{std::this_thread::get_id() == consumer, priority()}; });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // the workers start the first jobs
  size_t on_workers = 0;
  for (size_t i = 0; i < 8; ++i) {
    const Ran ran = pool.take(i);
    EXPECT_EQ(ran.nice, ran.on_consumer ? consumer_nice : std::min(consumer_nice + 10, 19)) << "job " << i;
    on_workers += !ran.on_consumer;
  }
  EXPECT_GT(on_workers, 0u);
}

TEST(OrderedPool, WithoutThreadsTheConsumerRunsEveryJob) {
  const auto consumer = std::this_thread::get_id();
  OrderedPool<bool> pool(20, 0, {4, 4}, [&](size_t) { return std::this_thread::get_id() == consumer; });
  for (size_t i = 0; i < 20; ++i) EXPECT_TRUE(pool.take(i));
}

TEST(OrderedPool, LeftEarlyItStartsNoMoreJobs) {
  std::atomic<size_t> ran{0};
  {
    OrderedPool<int> pool(1000, 2, {4, 4}, [&](size_t i) {
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
