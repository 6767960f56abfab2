// BulkLoad (ingest/store/bulk_load.h): a WAL database nobody else has open is written through a
// rollback journal while it lives, so appended pages go straight into the database file; with
// another connection open nothing changes; afterwards the database is in WAL mode again.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "ingest/store/bulk_load.h"
#include "ingest/store/write_combining_vfs.h"
#include "schema/database.h"
#include "tests/common/filler.h"
#include "tests/common/sql_int64.h"
#include "tests/common/temp_dir.h"

using namespace trialdb;
namespace fs = std::filesystem;

namespace {

uintmax_t wal_bytes(const std::string& db_path) {
  std::error_code ec;
  uintmax_t n = fs::file_size(db_path + "-wal", ec);
  return ec ? 0 : n;
}

std::string journal_mode(Database& db) {
  Statement q(db.handle(), "PRAGMA journal_mode");
  return q.step() ? q.text(0) : "";
}

// The connection's page cache in KiB (PRAGMA cache_size says -KiB where it was set so).
int64_t cache_kib(Database& db) {
  Statement q(db.handle(), "PRAGMA cache_size");
  return q.step() ? -q.int64(0) : 0;
}

int64_t synchronous(Database& db) {
  Statement q(db.handle(), "PRAGMA synchronous");
  return q.step() ? q.int64(0) : -1;
}

// 8 MiB of 1 MiB rows in one transaction.
void write_transaction(Database& db, int tag) { test::write_filler_mib(db, 8, tag); }

// A second connection, as the sqlite3 shell or another process would hold it.
struct OtherConnection {
  sqlite3* db = nullptr;
  explicit OtherConnection(const std::string& path) {
    sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr);
    sqlite3_busy_timeout(db, 5000);
  }
  ~OtherConnection() { sqlite3_close(db); }
  int64_t count(const char* sql) { return test::sql_int64(db, sql); }
};

}  // namespace

TEST(BulkLoad, AppendedPagesGoStraightToTheFileThenWalModeIsBack) {
  test::TempDir tmp("trialdb_bulk");
  const std::string path = tmp / "t.db";
  Database db(path, OpenMode::kCreate, write_combining_vfs_name());
  ASSERT_EQ(journal_mode(db), "wal");
  {
    BulkLoad bulk(db);
    ASSERT_TRUE(bulk.active());
    EXPECT_EQ(journal_mode(db), "truncate");
    EXPECT_EQ(synchronous(db), 2) << "a rollback journal needs synchronous=FULL";
    write_transaction(db, 1);
    write_transaction(db, 2);
    EXPECT_EQ(wal_bytes(path), 0u) << "the load went through the WAL";
    EXPECT_GE(fs::file_size(path), uintmax_t{16} << 20) << "the commits are not in the database file";
  }
  EXPECT_EQ(journal_mode(db), "wal");
  EXPECT_EQ(synchronous(db), 1);
  write_transaction(db, 3);
  EXPECT_GT(wal_bytes(path), uintmax_t{8} << 20) << "after the load, commits go through the WAL again";
  OtherConnection other(path);
  EXPECT_EQ(other.count("SELECT count(*) FROM filler"), 24);
  EXPECT_EQ(other.count("SELECT count(*) FROM pragma_integrity_check WHERE integrity_check = 'ok'"), 1);
}

TEST(BulkLoad, InactiveWhileAnotherConnectionHasTheDatabaseOpen) {
  test::TempDir tmp("trialdb_bulk");
  const std::string path = tmp / "t.db";
  Database db(path, OpenMode::kCreate, write_combining_vfs_name());
  write_transaction(db, 1);
  OtherConnection reader(path);
  ASSERT_EQ(reader.count("SELECT count(*) FROM filler"), 8);  // it has read: it holds the WAL index
  {
    BulkLoad bulk(db);  // must not wait for the reader either (busy timeout 0 while asking)
    EXPECT_FALSE(bulk.active());
    EXPECT_EQ(journal_mode(db), "wal");
    EXPECT_EQ(synchronous(db), 1);
    write_transaction(db, 2);
    EXPECT_EQ(reader.count("SELECT count(*) FROM filler"), 16);
  }
  EXPECT_EQ(journal_mode(db), "wal");
}

TEST(BulkLoad, InactiveInsideATransactionAndOnAnInMemoryDatabase) {
  test::TempDir tmp("trialdb_bulk");
  const std::string path = tmp / "t.db";
  Database db(path, OpenMode::kCreate, write_combining_vfs_name());
  {
    Transaction tx(db);
    BulkLoad bulk(db);
    EXPECT_FALSE(bulk.active());
  }
  Database mem(":memory:");
  BulkLoad bulk(mem);
  EXPECT_FALSE(bulk.active());
}

// Database switches a file to WAL when it opens it, so another process opening the database
// mid-load turns the load back to WAL; the writer follows, and nothing is lost.
TEST(BulkLoad, AnotherConnectionSwitchingBackToWalMidLoadLosesNothing) {
  test::TempDir tmp("trialdb_bulk");
  const std::string path = tmp / "t.db";
  Database db(path, OpenMode::kCreate, write_combining_vfs_name());
  {
    BulkLoad bulk(db);
    ASSERT_TRUE(bulk.active());
    EXPECT_TRUE(bulk.in_effect());
    write_transaction(db, 1);
    {
      Database other(path);
      EXPECT_EQ(journal_mode(other), "wal");
    }
    write_transaction(db, 2);  // the first transaction after the switch finds WAL mode
    EXPECT_TRUE(bulk.active());
    EXPECT_FALSE(bulk.in_effect()) << "the ingester would keep committing only once per GiB";
    EXPECT_EQ(journal_mode(db), "wal");
    EXPECT_GT(wal_bytes(path), uintmax_t{8} << 20) << "the writer did not follow the file into WAL mode";
  }
  EXPECT_EQ(journal_mode(db), "wal");
  OtherConnection check(path);
  EXPECT_EQ(check.count("SELECT count(*) FROM filler"), 16);
  EXPECT_EQ(check.count("SELECT count(*) FROM pragma_integrity_check WHERE integrity_check = 'ok'"), 1);
}

// A transaction that only appends gets a small page cache; any other, what runs after the load and
// a load moved back to WAL keep the connection's usual one.
TEST(BulkLoad, OnlyATransactionThatAppendsTakesASmallPageCache) {
  test::TempDir tmp("trialdb_bulk");
  const std::string path = tmp / "t.db";
  Database db(path, OpenMode::kCreate, write_combining_vfs_name());
  ASSERT_EQ(cache_kib(db), kPageCacheKiB);
  {
    BulkLoad bulk(db);
    ASSERT_TRUE(bulk.in_effect());
    bulk.size_cache(true);
    const int64_t appending = cache_kib(db);
    EXPECT_GT(appending, 0);
    EXPECT_LT(appending, kPageCacheKiB / 4);
    write_transaction(db, 1);  // 8 MiB through the small cache: spilled as it goes
    bulk.size_cache(false);
    EXPECT_EQ(cache_kib(db), kPageCacheKiB) << "a transaction inserting out of key order re-reads its pages";
    bulk.size_cache(true);
  }
  EXPECT_EQ(cache_kib(db), kPageCacheKiB) << "the load's end puts the usual cache back";
  {
    BulkLoad bulk(db);
    ASSERT_TRUE(bulk.in_effect());
    {
      Database other(path);  // switches the file back to WAL
    }
    write_transaction(db, 2);
    ASSERT_FALSE(bulk.in_effect());
    bulk.size_cache(true);
    EXPECT_EQ(cache_kib(db), kPageCacheKiB) << "a WAL transaction rewrites the WAL for every page spilled twice";
  }
  OtherConnection check(path);
  EXPECT_EQ(check.count("SELECT count(*) FROM filler"), 16);
  EXPECT_EQ(check.count("SELECT count(*) FROM pragma_integrity_check WHERE integrity_check = 'ok'"), 1);
}
