// A connection opened kReadOnlyShared (schema/database.h) is used by several threads at once:
// the export writes its files in parallel over it. A statement that fails there must report its
// own error, not what another thread's call left on the connection after it.
#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>

#include "schema/database.h"
#include "tests/common/temp_dir.h"

using namespace trialdb;
using trialdb::test::TempDir;

namespace {

// Enough failures, beside a thread stepping the connection all the while, that an error read
// after the connection's mutex was let go is replaced at least once (without the mutex held, 1 to 8 in 20,000 were).
constexpr int kFailures = 50000;

TEST(SharedConnection, AFailedStepReportsItsOwnErrorWhileAnotherThreadSteps) {
  TempDir dir;
  const std::string path = (dir.path / "t.db").string();
  { Database create(path, OpenMode::kCreate); }
  Database db(path, OpenMode::kReadOnlyShared);
  std::atomic<bool> done{false};
  std::thread other([&] {
    Statement ok(db.handle(), "SELECT count(*) FROM schema_version");
    while (!done) {
      ok.reset();
      while (ok.step()) {
      }
    }
  });
  Statement overflow(db.handle(), "SELECT abs(-9223372036854775807 - 1)");
  int own = 0;
  for (int i = 0; i < kFailures; ++i) {
    overflow.reset();
    try {
      overflow.step();
    } catch (const Error& e) {
      if (std::string(e.what()).find("integer overflow") != std::string::npos && e.sqlite_code() == SQLITE_ERROR) ++own;
      else ADD_FAILURE() << "failure " << i << " reported " << e.what() << " (code " << e.sqlite_code() << ")";
    }
  }
  done = true;
  other.join();
  EXPECT_EQ(own, kFailures);
}

}  // namespace
