// The page size policy (schema/page_size_policy.h): its model of SQLite's storage against SQLite
// itself, and the choices it makes for samples shaped like real trials' values.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "schema/database.h"
#include "schema/page_size_policy.h"
#include "tests/common/sql_int64.h"
#include "tests/common/temp_dir.h"

using namespace trialdb;
using trialdb::test::sql_int64;
using trialdb::test::TempDir;

namespace {

// Bytes of the file SQLite writes for these blobs, stored as the model assumes (a rowid table of
// one blob column, auto_vacuum INCREMENTAL, appended in order), less page 1 (the schema).
uint64_t sqlite_bytes(const std::string& path, const std::vector<uint64_t>& blobs, int page_size) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  const std::string setup = "PRAGMA page_size=" + std::to_string(page_size) +
                            "; PRAGMA auto_vacuum=INCREMENTAL;"
                            "CREATE TABLE b(value_id INTEGER PRIMARY KEY, data BLOB NOT NULL); BEGIN;";
  EXPECT_EQ(sqlite3_exec(db, setup.c_str(), nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
  sqlite3_stmt* ins = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, "INSERT INTO b(data) VALUES (zeroblob(?))", -1, &ins, nullptr), SQLITE_OK);
  for (uint64_t n : blobs) {
    sqlite3_bind_int64(ins, 1, static_cast<sqlite3_int64>(n));
    EXPECT_EQ(sqlite3_step(ins), SQLITE_DONE);
    sqlite3_reset(ins);
  }
  sqlite3_finalize(ins);
  EXPECT_EQ(sqlite3_exec(db, "COMMIT", nullptr, nullptr, nullptr), SQLITE_OK);
  const int64_t pages = sql_int64(db, "PRAGMA page_count");
  sqlite3_close(db);
  return static_cast<uint64_t>(pages - 1) * static_cast<uint64_t>(page_size);
}

std::vector<uint64_t> log_uniform(std::mt19937_64& rng, size_t count, double lo, double hi) {
  std::uniform_real_distribution<double> exponent(std::log(lo), std::log(hi));
  std::vector<uint64_t> v(count);
  for (auto& n : v) n = static_cast<uint64_t>(std::exp(exponent(rng)));
  return v;
}

std::vector<uint64_t> repeated(std::initializer_list<uint64_t> sizes, size_t times) {
  std::vector<uint64_t> v;
  for (size_t i = 0; i < times; ++i) v.insert(v.end(), sizes);
  return v;
}

const PageSizeLimits kLimits = page_size_limits();

}  // namespace

TEST(PageSizePolicy, ModelsSqlitesStorageToWithinAPageOrTwo) {
  std::mt19937_64 rng(7);
  const std::vector<std::vector<uint64_t>> samples = {
      log_uniform(rng, 1500, 129, 3000),              // small values around a page
      repeated({180, 600, 4116, 18468, 24000}, 300),  // a CNN's weights, gradients, activations
      log_uniform(rng, 300, 150, 3e6),                // every size at once
      repeated({2000, 1048600, 4194316}, 8),          // large tensors
  };
  TempDir tmp;
  int file = 0;
  for (const auto& blobs : samples)
    for (int page_size = 2048; page_size <= kSqliteLargestPageSize; page_size *= 2) {
      const uint64_t real = sqlite_bytes(tmp / ("m" + std::to_string(file++) + ".db"), blobs, page_size);
      const uint64_t model = blob_table_bytes(blobs, page_size);
      const uint64_t diff = real > model ? real - model : model - real;
      EXPECT_LE(diff, 2u * static_cast<uint64_t>(page_size))
          << "page size " << page_size << ": SQLite " << real << " bytes, model " << model << " (sample of "
          << blobs.size() << " blobs from " << blobs.front() << " bytes)";
    }
}

TEST(PageSizePolicy, SmallValuesKeepTheSmallestSize) {
  EXPECT_EQ(choose_page_size({}, kLimits), kPageSize);
  // A CNN's sample: the median byte in a 19 KiB activation.
  EXPECT_EQ(choose_page_size({repeated({180, 600, 4116, 18468, 24000}, 200), 20}, kLimits), kPageSize);
  // A transformer's: 4-8 KiB weights and gradients.
  EXPECT_EQ(choose_page_size({repeated({4116, 8212, 1300}, 300), 900}, kLimits), kPageSize);
}

TEST(PageSizePolicy, LargeValuesGetLargerPagesWithinTheTolerance) {
  const PageSizeSample resnet{repeated({524, 2100, 37000, 1048600, 2359300}, 40), 200};
  const int chosen = choose_page_size(resnet, kLimits);
  EXPECT_GE(chosen, 16384);
  EXPECT_LE(static_cast<double>(blob_table_bytes(resnet.blob_bytes, chosen)),
            static_cast<double>(blob_table_bytes(resnet.blob_bytes, kPageSize)) * (1 + kPageSizeTolerance));
  EXPECT_EQ(choose_page_size({repeated({4194316}, 64), 66}, kLimits), kSqliteLargestPageSize);
}

TEST(PageSizePolicy, NoPageLargerThanAnEighthOfTheMedianBytesValue) {
  // 64 KiB values: pages of at most 8 KiB, whatever the storage says.
  const int chosen = choose_page_size({repeated({65536 + 20}, 100), 10}, kLimits);
  EXPECT_LE(static_cast<uint64_t>(chosen) * kMinPagesPerValue, 65536u + 20);
  EXPECT_GT(chosen, kPageSize);
}

TEST(PageSizePolicy, AStepsLeavesFitInHalfThePageCache) {
  // Large values, but so many tensors a step that a leaf each would not fit in the cache.
  const std::vector<uint64_t> blobs = repeated({4194316}, 64);
  const uint64_t tensors = kLimits.cache_bytes / 2 / 8192;  // room for 8 KiB leaves, not 16 KiB
  EXPECT_EQ(choose_page_size({blobs, tensors}, kLimits), 8192);
  EXPECT_EQ(choose_page_size({blobs, 0}, {kPageSize, kSqliteLargestPageSize, 0}), kSqliteLargestPageSize);
}

TEST(PageSizePolicy, AMoreCompactSmallerSizeWinsOverALargerOne) {
  // 140,073-byte blobs: an eighth of them allows 16 KiB pages, but those leave 5% more unused
  // after each blob's tail than 8 KiB pages do.
  const PageSizeSample sample{repeated({140073}, 400), 10};
  const int chosen = choose_page_size(sample, kLimits);
  EXPECT_EQ(chosen, 8192);
  EXPECT_GT(static_cast<double>(blob_table_bytes(sample.blob_bytes, 16384)),
            static_cast<double>(blob_table_bytes(sample.blob_bytes, chosen)) * (1 + kPageSizeTolerance));
}
