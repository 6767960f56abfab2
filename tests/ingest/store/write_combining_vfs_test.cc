// The write-combining VFS shim (ingest/store/write_combining_vfs.h): with combining on, consecutive
// page writes reach the file only as larger writes, yet the database reads, commits, rolls back
// and is seen by other connections exactly as without it.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "schema/database.h"
#include "ingest/store/write_combining_vfs.h"
#include "tests/common/file_bytes.h"
#include "tests/common/sql_int64.h"
#include "tests/common/temp_dir.h"

using namespace trialdb;

using test::file_bytes;
using test::sql_int64;

TEST(WriteCombiningVfs, OnlyThroughTheShimAndOnlyForTheMainFile) {
  test::TempDir tmp("trialdb_wcvfs");
  Database db(tmp / "t.db", OpenMode::kCreate, write_combining_vfs_name());
  EXPECT_TRUE(set_write_combining(db.handle(), true));
  EXPECT_TRUE(set_write_combining(db.handle(), false));
  sqlite3* plain = nullptr;
  ASSERT_EQ(sqlite3_open((tmp / "t.db").c_str(), &plain), SQLITE_OK);
  EXPECT_FALSE(set_write_combining(plain, true)) << "a connection of the default VFS has no shim";
  sqlite3_close(plain);
}

// A rollback-journal database written with combining on: a rolled-back transaction leaves
// nothing, committed ones are whole, another connection sees every commit, and the file is
// consistent (integrity_check) before and after combining is turned off.
TEST(WriteCombiningVfs, CommitsRollbacksAndOtherConnectionsSeeWhatSqliteWrote) {
  test::TempDir tmp("trialdb_wcvfs");
  const std::string path = tmp / "t.db";
  Database db(path, OpenMode::kCreate, write_combining_vfs_name());
  db.exec("PRAGMA journal_mode=TRUNCATE");
  db.exec("PRAGMA synchronous=FULL");
  db.exec("PRAGMA cache_size=-1024");  // 1 MiB: spills mid-transaction, reads pages back
  db.exec("CREATE TABLE t(k INTEGER PRIMARY KEY, v BLOB)");
  ASSERT_TRUE(set_write_combining(db.handle(), true));
  for (int tx = 0; tx < 6; ++tx) {
    db.exec("BEGIN IMMEDIATE");
    for (int i = 0; i < 40; ++i) db.exec("INSERT INTO t(v) VALUES (randomblob(100000))");
    db.exec("UPDATE t SET v = randomblob(5000) WHERE k % 7 = 0");
    db.exec(tx % 3 == 2 ? "ROLLBACK" : "COMMIT");
  }
  sqlite3* other = nullptr;
  ASSERT_EQ(sqlite3_open_v2(path.c_str(), &other, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_busy_timeout(other, 5000);
  EXPECT_EQ(sql_int64(other, "SELECT count(*) FROM t"), 4 * 40);
  EXPECT_EQ(sql_int64(other, "SELECT count(*) FROM pragma_integrity_check WHERE integrity_check = 'ok'"), 1);
  EXPECT_EQ(sql_int64(db.handle(), "SELECT sum(length(v) = 5000) FROM t"),
            sql_int64(other, "SELECT count(*) FROM t WHERE k % 7 = 0"));
  ASSERT_TRUE(set_write_combining(db.handle(), false));
  db.exec("INSERT INTO t(v) VALUES (randomblob(10))");
  EXPECT_EQ(sql_int64(other, "SELECT count(*) FROM t"), 4 * 40 + 1);
  sqlite3_close(other);
}

// The shim really holds writes back: with combining on, page writes to the main file do not reach
// the file (as another reader of it sees) until something that could observe the file (here a
// read of an overlapping range, a sync, turning combining off), and a read of a range they do
// not overlap does not write them. A pass-through shim fails this test (it passes the two above).
TEST(WriteCombiningVfs, WritesAreHeldBackUntilSomethingCouldObserveThem) {
  test::TempDir tmp("trialdb_wcvfs");
  const std::string path = tmp / "t.db";
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, write_combining_vfs_name()),
            SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "PRAGMA journal_mode=TRUNCATE; CREATE TABLE t(x)", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_file* file = nullptr;  // the shim's file for "main", written here directly, past the end
  ASSERT_EQ(sqlite3_file_control(db, "main", SQLITE_FCNTL_FILE_POINTER, &file), SQLITE_OK);
  ASSERT_NE(file, nullptr);
  ASSERT_TRUE(set_write_combining(db, true));
  const std::string before = file_bytes(path);
  ASSERT_LT(before.size(), 1u << 20);

  constexpr int kPage = 4096;
  // Writes three consecutive pages filled with `mark` at `offset`.
  auto write_pages = [&](char mark, sqlite3_int64 offset) {
    const std::string page(kPage, mark);
    for (int i = 0; i < 3; ++i)
      ASSERT_EQ(file->pMethods->xWrite(file, page.data(), kPage, offset + i * kPage), SQLITE_OK);
  };
  // Whether the file (read around SQLite) holds those pages.
  auto on_disk = [&](char mark, sqlite3_int64 offset) {
    const std::string bytes = file_bytes(path);
    return bytes.size() >= static_cast<size_t>(offset + 3 * kPage) &&
           bytes.substr(static_cast<size_t>(offset), 3 * kPage) == std::string(3 * kPage, mark);
  };

  // Held back; a read elsewhere leaves them so; a read of one of them writes them first.
  write_pages('a', 1 << 20);
  EXPECT_EQ(file_bytes(path), before) << "with combining on, the writes reached the file at once";
  char got[kPage];
  ASSERT_EQ(file->pMethods->xRead(file, got, 100, 0), SQLITE_OK);
  EXPECT_EQ(file_bytes(path), before) << "a read of a range the held-back writes do not overlap wrote them";
  ASSERT_EQ(file->pMethods->xRead(file, got, kPage, (1 << 20) + kPage), SQLITE_OK);
  EXPECT_EQ(std::string(got, kPage), std::string(kPage, 'a')) << "a read sees the held-back writes";
  EXPECT_TRUE(on_disk('a', 1 << 20));

  // Held back until a sync.
  write_pages('b', 2 << 20);
  EXPECT_FALSE(on_disk('b', 2 << 20)) << "with combining on, the writes reached the file before a sync";
  ASSERT_EQ(file->pMethods->xSync(file, SQLITE_SYNC_NORMAL), SQLITE_OK);
  EXPECT_TRUE(on_disk('b', 2 << 20)) << "a sync did not write what was held back";

  // Held back until combining is turned off; then written one by one again.
  write_pages('c', 3 << 20);
  EXPECT_FALSE(on_disk('c', 3 << 20));
  ASSERT_TRUE(set_write_combining(db, false));
  EXPECT_TRUE(on_disk('c', 3 << 20)) << "turning combining off did not write what was held back";
  write_pages('d', 4 << 20);
  EXPECT_TRUE(on_disk('d', 4 << 20)) << "with combining off, a write is held back";
  sqlite3_close(db);
}
