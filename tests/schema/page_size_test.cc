// The page size (schema/database.h, kPageSize): a new database takes it unless given another
// (page_size_policy.h chooses for the ingest); a file made with 4 KiB pages keeps them, is read
// and written as it is, and its WAL checkpoints at the same size in bytes as a new file's (the
// thresholds are bytes, turned into the file's frames); `compact` rebuilds it with the size its
// values call for (kPageSize for a file without large ones) when no other connection has it open.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <cstdint>
#include <fstream>
#include <string>

#include "schema/compaction.h"
#include "schema/database.h"
#include "tests/common/sql_int64.h"
#include "tests/common/temp_dir.h"

using namespace trialdb;
using trialdb::test::sql_int64;
using trialdb::test::TempDir;

namespace {

constexpr int kOlderPageSize = 4096;

int64_t page_size(const Database& db) { return sql_int64(db.handle(), "PRAGMA page_size"); }
int64_t autocheckpoint_frames(const Database& db) { return sql_int64(db.handle(), "PRAGMA wal_autocheckpoint"); }
std::string text_of(const Database& db, const char* sql) {
  Statement q(db.handle(), sql);
  return q.step() ? q.text(0) : "";
}
constexpr int64_t kSynchronousNormal = 1;  // PRAGMA synchronous's number for NORMAL

// Rewrites the database at `path` with `bytes` pages, as a file made by a build with that page
// size (VACUUM changes the page size only outside WAL mode).
void rewrite_with_page_size(const std::string& path, int bytes) {
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &raw), SQLITE_OK);
  const std::string sql = "PRAGMA journal_mode=DELETE; PRAGMA page_size=" + std::to_string(bytes) + "; VACUUM;";
  EXPECT_EQ(sqlite3_exec(raw, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(raw);
  EXPECT_EQ(sql_int64(raw, "PRAGMA page_size"), bytes);
  sqlite3_close(raw);
}

// A database at `path` made by a build with 4 KiB pages, holding one trial named `trial`.
void make_older_file(const std::string& path, const char* trial) {
  {
    Database db(path);
    db.exec(std::string("INSERT INTO trial(trial_id, name, path) VALUES (1, '") + trial + "', '/a')");
  }
  rewrite_with_page_size(path, kOlderPageSize);
}

}  // namespace

TEST(PageSize, ANewDatabaseTakesKPageSizeAndCheckpointsAtTheBytesInItsFrames) {
  TempDir tmp;
  Database db(tmp / "new.db");
  EXPECT_EQ(page_size(db), kPageSize);
  EXPECT_EQ(autocheckpoint_frames(db), kWalAutoCheckpointBytes / kPageSize);
  EXPECT_EQ(db.wal_frames(kWalAutoCheckpointBytes), kWalAutoCheckpointBytes / kPageSize);
}

TEST(PageSize, AFileWithFourKiBPagesKeepsThemIsWrittenAndReadAndCheckpointsAtTheSameBytes) {
  ASSERT_NE(kPageSize, kOlderPageSize) << "the test needs a page size other than a new file's";
  TempDir tmp;
  const std::string path = tmp / "older.db";
  make_older_file(path, "before");
  {
    Database db(path, OpenMode::kExisting);
    EXPECT_EQ(page_size(db), kOlderPageSize);
    EXPECT_EQ(autocheckpoint_frames(db), kWalAutoCheckpointBytes / kOlderPageSize);
    EXPECT_EQ(db.wal_frames(kWalAutoCheckpointBytes), kWalAutoCheckpointBytes / kOlderPageSize);
    db.exec("INSERT INTO trial(trial_id, name, path) VALUES (2, 'after', '/b')");
  }
  Database db(path, OpenMode::kReadOnly);
  EXPECT_EQ(page_size(db), kOlderPageSize);
  EXPECT_EQ(sql_int64(db.handle(), "SELECT count(*) FROM trial WHERE name IN ('before', 'after')"), 2);
}

TEST(PageSize, ANewDatabaseTakesThePageSizeItIsGiven) {
  TempDir tmp;
  constexpr int kLarger = 32768;
  Database db(tmp / "new.db", OpenMode::kCreate, nullptr, {}, kLarger);
  EXPECT_EQ(page_size(db), kLarger);
  EXPECT_EQ(db.wal_frames(kWalAutoCheckpointBytes), kWalAutoCheckpointBytes / kLarger);
  db.exec("INSERT INTO trial(trial_id, name, path) VALUES (1, 'a', '/a')");
  Database again(tmp / "new.db", OpenMode::kCreate);  // an existing file keeps its size
  EXPECT_EQ(page_size(again), kLarger);
}

TEST(PageSize, CompactRebuildsAFileWithFourKiBPagesWithKPageSizeAndReturnsItToWal) {
  TempDir tmp;
  const std::string path = tmp / "older.db";
  make_older_file(path, "kept");
  Database db(path, OpenMode::kExisting);
  const CompactionResult r = compact(db, [](uint64_t, uint64_t) {});
  EXPECT_EQ(r.page_size_before, static_cast<uint64_t>(kOlderPageSize));
  EXPECT_EQ(r.page_size_after, static_cast<uint64_t>(kPageSize));
  EXPECT_EQ(page_size(db), kPageSize);
  EXPECT_EQ(text_of(db, "PRAGMA journal_mode"), "wal");
  EXPECT_EQ(sql_int64(db.handle(), "PRAGMA synchronous"), kSynchronousNormal);
  EXPECT_EQ(sql_int64(db.handle(), "SELECT count(*) FROM trial WHERE name = 'kept'"), 1);
  EXPECT_EQ(text_of(db, "PRAGMA integrity_check"), "ok");
}

TEST(PageSize, CompactKeepsThePagesOfAFileAnotherConnectionHasOpen) {
  TempDir tmp;
  const std::string path = tmp / "older.db";
  make_older_file(path, "kept");
  Database db(path, OpenMode::kExisting);  // back in WAL mode
  Database reader(path, OpenMode::kReadOnly);
  ASSERT_EQ(sql_int64(reader.handle(), "SELECT count(*) FROM trial"), 1);  // the reader holds the WAL open
  const CompactionResult r = compact(db, [](uint64_t, uint64_t) {});
  EXPECT_EQ(r.page_size_after, static_cast<uint64_t>(kOlderPageSize));
  EXPECT_EQ(text_of(db, "PRAGMA journal_mode"), "wal");
  EXPECT_EQ(sql_int64(reader.handle(), "SELECT count(*) FROM trial WHERE name = 'kept'"), 1);
}

namespace {

// Bytes this process has passed to write calls so far (/proc/self/io, wchar).
uint64_t bytes_written() {
  std::ifstream io("/proc/self/io");
  std::string key;
  uint64_t value = 0;
  while (io >> key >> value)
    if (key == "wchar:") return value;
  return 0;
}

}  // namespace

TEST(PageSize, CompactGivesAFileEmptiedOfLargeValuesTheSmallestSizeWritingLittleMoreThanItKeeps) {
  TempDir tmp;
  const std::string path = tmp / "emptied.db";
  constexpr int kLarge = 32768;
  constexpr int kBlobs = 160, kBlobBytes = 256 << 10;  // 40 MiB of values, then none
  Database db(path, OpenMode::kCreate, nullptr, {}, kLarge);
  db.exec("BEGIN");
  for (int i = 0; i < kBlobs; ++i)
    db.exec("INSERT INTO value_blob(data) VALUES (zeroblob(" + std::to_string(kBlobBytes) + "))");
  db.exec("COMMIT");
  db.exec("DELETE FROM value_blob");
  db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  const uint64_t before = bytes_written();
  const CompactionResult r = compact(db, [](uint64_t, uint64_t) {});
  const uint64_t written = bytes_written() - before;
  EXPECT_EQ(r.page_size_before, static_cast<uint64_t>(kLarge));
  EXPECT_EQ(r.page_size_after, static_cast<uint64_t>(kPageSize));
  EXPECT_LT(r.bytes_after, r.bytes_before / 10);
  // The rollback journal would have kept every page of the file (the 40 MiB freed included).
  EXPECT_LT(written, static_cast<uint64_t>(kBlobs) * kBlobBytes / 4) << "bytes written by compact: " << written;
  EXPECT_EQ(text_of(db, "PRAGMA journal_mode"), "wal");
  EXPECT_EQ(text_of(db, "PRAGMA integrity_check"), "ok");
}
