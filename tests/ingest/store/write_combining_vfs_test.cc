// The write-combining VFS shim (ingest/store/write_combining_vfs.h): with combining on, consecutive
// page writes reach the file only as larger writes, yet the database reads, commits, rolls back
// and is seen by other connections exactly as without it.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "schema/database.h"
#include "ingest/store/write_combining_vfs.h"
#include "tests/common/sql_int64.h"
#include "tests/common/temp_dir.h"

using namespace trialdb;

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
  db.exec("PRAGMA cache_size=-1024");   // 1 MiB: spills mid-transaction, reads pages back
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
