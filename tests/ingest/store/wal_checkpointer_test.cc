// WalCheckpointer (ingest/store/wal_checkpointer.h): while it lives, the writer's commits are copied
// into the database file by its thread, and afterwards the writer checkpoints by itself again.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "schema/database.h"
#include "ingest/store/wal_checkpointer.h"
#include "tests/common/filler.h"
#include "tests/common/temp_dir.h"

using namespace trialdb;
namespace fs = std::filesystem;

namespace {

struct TempDb {
  test::TempDir dir{"trialdb_ckpt"};
  std::string path() const { return dir / "t.db"; }
};

// The database file's size: it grows only when a checkpoint copies pages out of the WAL.
uintmax_t db_file_mib(const TempDb& t) { return fs::file_size(t.path()) >> 20; }

// ~48 MiB in one transaction: past the 32 MiB at which the thread starts a pass.
void write_big_transaction(Database& db, int tag) { test::write_filler_mib(db, 48, tag); }

}  // namespace

TEST(WalCheckpointer, CopiesCommitsBesideTheWriterAndHandsTheCheckpointBack) {
  TempDb tmp;
  Database db(tmp.path());
  // 48 MiB: below the writer's automatic checkpoint (128 MiB of frames), so they stay in the WAL.
  write_big_transaction(db, 1);
  EXPECT_LT(db_file_mib(tmp), 2u);
  {
    WalCheckpointer c(db);
    ASSERT_TRUE(c.active());
    write_big_transaction(db, 2);
    c.after_commit();
  }  // the destructor lets the pass under way finish
  EXPECT_GE(db_file_mib(tmp), 95u) << "the checkpointer's pass did not copy both commits";
  // The automatic checkpoint is back: three more commits restart the WAL and pass 128 MiB of frames.
  for (int tag = 3; tag <= 5; ++tag) write_big_transaction(db, tag);
  EXPECT_GE(db_file_mib(tmp), 230u) << "the writer's automatic checkpoint did not come back";
  Statement q(db.handle(), "SELECT count(*), sum(length(v)) FROM filler");
  ASSERT_TRUE(q.step());
  EXPECT_EQ(q.int64(0), 5 * 48);
}

TEST(WalCheckpointer, InactiveOnAnInMemoryDatabase) {
  Database db(":memory:");
  WalCheckpointer c(db);
  EXPECT_FALSE(c.active());
  c.after_commit();  // harmless
}
