// EarlyWriteback (ingest/store/early_writeback.h) uses SQLite's own descriptor of the database file
// and never closes it (closing any descriptor of the file would drop the process's POSIX locks).
#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/stat.h>

#include <string>

#include "schema/database.h"
#include "ingest/store/early_writeback.h"
#include "tests/common/temp_dir.h"

using namespace trialdb;

TEST(EarlyWriteback, UsesSqlitesDescriptorOfTheFileAndLeavesItOpen) {
  test::TempDir tmp("trialdb_writeback");
  const std::string path = tmp / "t.db";
  Database db(path);
  int fd = -1;
  {
    EarlyWriteback wb(db);
    ASSERT_TRUE(wb.active());
    fd = wb.descriptor();
    struct stat a, b;
    ASSERT_EQ(::fstat(fd, &a), 0);
    ASSERT_EQ(::stat(path.c_str(), &b), 0);
    EXPECT_EQ(a.st_ino, b.st_ino);
    EXPECT_EQ(a.st_dev, b.st_dev);
    db.exec("CREATE TABLE t(x BLOB)");
    db.exec("INSERT INTO t VALUES (zeroblob(4000000))");
  }
  EXPECT_NE(::fcntl(fd, F_GETFD), -1) << "SQLite's descriptor was closed";
  Statement q(db.handle(), "SELECT length(x) FROM t");
  ASSERT_TRUE(q.step());
  EXPECT_EQ(q.int64(0), 4000000);
}

TEST(EarlyWriteback, InactiveOnAnInMemoryDatabase) {
  Database mem(":memory:");
  EarlyWriteback wb(mem);
  EXPECT_FALSE(wb.active());
}
