// D13: two ingests of different folders under one trial name: exactly one gets the name, the
// other is refused (kUsage, naming the trial and the folder it comes from), never both.
//
// The race is forced rather than hoped for: an SQLite authorizer on the first connection runs the
// second ingest's claim at the moment the first prepares its INSERT of the trial row, whenever
// that INSERT is not inside a transaction (a name check outside the write transaction would pass
// for both). Inside one transaction, the second ingest claims the name after the first's commit.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <cstring>
#include <optional>
#include <string>

#include "ingest/pipeline/catalog.h"
#include "schema/database.h"
#include "tests/common/temp_dir.h"

namespace trialdb {
namespace {

using test::TempDir;

constexpr const char* kName = "same";
constexpr const char* kFolderA = "/trials/a";
constexpr const char* kFolderB = "/trials/b";

// Whether a Catalog for (name, folder) could be made, and why not.
struct Claim {
  bool ok = false;
  std::string refusal;
};

Claim claim(Database& db, const char* folder) {
  Claim c;
  try {
    Catalog catalog(db, kName, folder);
    c.ok = true;
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUsage) << e.what();
    c.refusal = e.what();
  }
  return c;
}

struct Interloper {
  Database* first = nullptr;
  Database* second = nullptr;
  std::optional<Claim> result;
};

int claim_between_check_and_insert(void* arg, int action, const char* table, const char*, const char*, const char*) {
  auto* in = static_cast<Interloper*>(arg);
  if (action == SQLITE_INSERT && table && std::strcmp(table, "trial") == 0 && !in->result &&
      sqlite3_get_autocommit(in->first->handle()))
    in->result = claim(*in->second, kFolderB);
  return SQLITE_OK;
}

TEST(SameTrialName, OnlyOneOfTwoFoldersGetsTheName) {
  TempDir tmp("hostile_same_name");
  const std::string path = tmp / "db.sqlite";
  Database a(path);
  Database b(path);
  Interloper in{&a, &b, std::nullopt};
  sqlite3_set_authorizer(a.handle(), claim_between_check_and_insert, &in);
  const Claim first = claim(a, kFolderA);
  sqlite3_set_authorizer(a.handle(), nullptr, nullptr);
  const Claim second = in.result ? *in.result : claim(b, kFolderB);

  EXPECT_NE(first.ok, second.ok) << "both ingests got trial '" << kName << "'";
  const Claim& refused = first.ok ? second : first;
  EXPECT_NE(refused.refusal.find(std::string("trial '") + kName + "' already exists"), std::string::npos)
      << refused.refusal;
  EXPECT_NE(refused.refusal.find("--name"), std::string::npos) << refused.refusal;
  Statement q(a.handle(), "SELECT count(*) FROM trial WHERE name = ?");
  q.bind(1, std::string(kName));
  ASSERT_TRUE(q.step());
  EXPECT_EQ(q.int64(0), 1);
}

// The same folder under its own name again is no conflict (a re-run).
TEST(SameTrialName, TheSameFolderAgainIsARerun) {
  TempDir tmp("hostile_same_name");
  const std::string path = tmp / "db.sqlite";
  Database a(path);
  Database b(path);
  const Claim first = claim(a, kFolderA);
  const Claim again = claim(b, kFolderA);
  EXPECT_TRUE(first.ok && again.ok) << first.refusal << again.refusal;
}

}  // namespace
}  // namespace trialdb
