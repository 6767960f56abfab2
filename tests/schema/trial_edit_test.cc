// remove_trial and rename_trial (schema/trial_edit.h): every row of the trial goes (or follows
// the new name), in every table that holds one, and no row of another trial; a trial a live
// follower holds (schema/follower_claim.h) is refused, naming the follower, until its claim
// expires. compact (schema/compaction.h) gives the freed pages back to the file system.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "schema/compaction.h"
#include "schema/database.h"
#include "schema/follower_claim.h"
#include "schema/trial_edit.h"
#include "tests/common/temp_dir.h"

using namespace trialdb;
using trialdb::test::TempDir;

namespace {

constexpr int kBlobBytes = 64 * 1024;

// Trial `name` (id) with one of everything: a worker, a step, a tensor with a value whose blob
// is stored apart, its distribution and histogram, a collection and its member, the file
// ledgers, an error, and rows of the rule runner's tables and of a rule's own state table.
void add_trial(Database& db, int64_t id, const std::string& name, int values = 1) {
  const std::string i = std::to_string(id), n = "'" + name + "'";
  db.exec("INSERT INTO trial(trial_id, name, path) VALUES (" + i + ", " + n + ", '/x')");
  db.exec("INSERT INTO worker(worker_id, trial_id, name) VALUES (" + i + ", " + i + ", 'worker_0')");
  db.exec("INSERT INTO step(trial_id, step, mode, mode_step, tensor_step) VALUES (" + i + ", 0, 'TRAIN', 0, 0)");
  db.exec("INSERT INTO step_worker VALUES (" + i + ", 0, " + i + ")");
  db.exec("INSERT INTO tensor(tensor_id, trial_id, name) VALUES (" + i + ", " + i + ", 'w')");
  for (int v = 0; v < values; ++v) {
    const std::string vid = std::to_string(id * 1000 + v);
    db.exec("INSERT INTO value_blob(value_id, data) VALUES (" + vid + ", zeroblob(" + std::to_string(kBlobBytes) +
            "))");
    db.exec(  // the first value has a distribution and a histogram, under the trial's id
        "INSERT INTO value(trial_id, tensor_id, tensor_step, step_offset, worker_id, value_id, distribution_id) "
        "VALUES (" +
        i + ", " + i + ", " + std::to_string(v) + ", 0, " + i + ", " + vid + ", " + (v == 0 ? i : "NULL") + ")");
  }
  db.exec("INSERT INTO value_histogram(distribution_id, buckets) VALUES (" + i +
          ", X'01')");  // a histogram blob of no runs
  db.exec("INSERT INTO value_distribution(distribution_id, nan, pos_inf, neg_inf, zero, negative, positive) VALUES (" +
          i + ", 0, 0, 0, 0, 0, 1)");
  db.exec("INSERT INTO collection(collection_id, trial_id, name, definition) VALUES (" + i + ", " + i + ", 'c', '{}')");
  db.exec("INSERT INTO collection_member VALUES (" + i + ", " + i + ")");
  db.exec("INSERT INTO event_file(trial_id, path) VALUES (" + i + ", 'e')");
  db.exec("INSERT INTO ingested_file VALUES (" + i + ", 'i')");
  db.exec("INSERT INTO partial_file VALUES (" + i + ", 'p', '')");
  db.exec("INSERT INTO waiting_file VALUES (" + i + ", 'w')");
  db.exec("INSERT INTO ingest_error(trial_id, file, message) VALUES (" + i + ", 'f', 'm')");
  db.exec("INSERT INTO rule_finding(trial, rule, tensor) VALUES (" + n + ", 'r', 'w')");
  db.exec("INSERT INTO rule_delivery(finding_id) SELECT finding_id FROM rule_finding WHERE trial = " + n);
  db.exec("INSERT INTO rule_mystate(trial, x) VALUES (" + n + ", 1)");
}

// The rule runner's tables this test needs, as rules_base.sql has them (trial named by text),
// and a rule's state table of a name no list knows.
void add_rule_tables(Database& db) {
  db.exec("CREATE TABLE rule_finding (finding_id INTEGER PRIMARY KEY, trial TEXT NOT NULL, rule TEXT, tensor TEXT)");
  db.exec("CREATE TABLE rule_delivery (finding_id INTEGER PRIMARY KEY)");
  db.exec("CREATE TABLE rule_mystate (trial TEXT NOT NULL, x INTEGER)");
}

int64_t count(Database& db, const std::string& sql) {
  Statement q(db.handle(), sql);
  q.step();
  return q.int64(0);
}

// Rows of every table, trial by trial: "table:trial_id=n" or "table:trial=name" for the tables
// that say whose a row is, and the rows of the tables hanging off them.
std::vector<std::string> rows_of(Database& db, int64_t id, const std::string& name) {
  std::vector<std::string> found;
  Statement tables(db.handle(), "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite%'");
  std::vector<std::string> names;
  while (tables.step()) names.push_back(tables.text(0));
  for (const std::string& t : names) {
    auto has = [&](const char* col) {
      return count(db, "SELECT count(*) FROM pragma_table_info('" + t + "') WHERE name = '" + col + "'") > 0;
    };
    int64_t n = 0;
    if (has("trial_id")) n = count(db, "SELECT count(*) FROM " + t + " WHERE trial_id = " + std::to_string(id));
    else if (has("trial")) n = count(db, "SELECT count(*) FROM " + t + " WHERE trial = '" + name + "'");
    if (n) found.push_back(t + ": " + std::to_string(n));
  }
  const std::string i = std::to_string(id);
  for (const auto& [what, sql] : std::vector<std::pair<std::string, std::string>>{
           {"value_blob", "SELECT count(*) FROM value_blob WHERE value_id / 1000 = " + i},
           {"value_distribution", "SELECT count(*) FROM value_distribution WHERE distribution_id = " + i},
           {"value_histogram", "SELECT count(*) FROM value_histogram WHERE distribution_id = " + i},
           {"collection_member", "SELECT count(*) FROM collection_member WHERE collection_id = " + i},
           {"rule_delivery", "SELECT count(*) FROM rule_delivery WHERE finding_id = " + i}}) {
    if (int64_t n = count(db, sql)) found.push_back(what + ": " + std::to_string(n));
  }
  return found;
}

TEST(TrialEdit, RemoveTakesEveryRowOfTheTrialAndNoneOfAnother) {
  TempDir dir;
  Database db(dir / "t.db");
  add_rule_tables(db);
  add_trial(db, 1, "gone");
  add_trial(db, 2, "kept");
  const std::vector<std::string> kept_before = rows_of(db, 2, "kept");
  ASSERT_GE(kept_before.size(), 14u);
  ASSERT_FALSE(rows_of(db, 1, "gone").empty());
  {
    Transaction tx(db);
    remove_trial(db, "gone");
    tx.commit();
  }
  EXPECT_EQ(rows_of(db, 1, "gone"), std::vector<std::string>());
  EXPECT_EQ(rows_of(db, 2, "kept"), kept_before);
  EXPECT_THROW(remove_trial(db, "gone"), Error);
}

// The only trial of a database is removed by emptying its tables (trial_edit.cc): what is not
// a trial's (the schema's fixed tables, the database's identity) stays.
TEST(TrialEdit, RemovingTheOnlyTrialEmptiesItsTablesAndKeepsTheFixedOnes) {
  TempDir dir;
  Database db(dir / "t.db");
  add_rule_tables(db);
  add_trial(db, 7, "only", 3);
  const char* const fixed =
      "SELECT (SELECT count(*) FROM dtype_name) || ',' || (SELECT count(*) FROM reduction_kind) || ',' || "
      "(SELECT count(*) FROM bucket_octave) || ',' || (SELECT count(*) FROM schema_version) || ',' || "
      "(SELECT uid FROM database_identity)";
  auto text = [&](const char* sql) {
    Statement q(db.handle(), sql);
    return q.step() ? q.text(0) : std::string();
  };
  const std::string fixed_before = text(fixed);
  ASSERT_GE(rows_of(db, 7, "only").size(), 14u);
  {
    Transaction tx(db);
    remove_trial(db, "only");
    tx.commit();
  }
  EXPECT_EQ(rows_of(db, 7, "only"), std::vector<std::string>());
  for (const char* table : {"value", "value_blob", "value_distribution", "value_histogram", "collection_member",
                            "tensor", "step", "trial", "rule_finding", "rule_delivery", "rule_mystate"})
    EXPECT_EQ(count(db, std::string("SELECT count(*) FROM ") + table), 0) << table;
  EXPECT_EQ(text(fixed), fixed_before);
  EXPECT_EQ(text("PRAGMA integrity_check"), "ok");
}

TEST(TrialEdit, RenameMovesTheRuleRowsAndRefusesTakenNames) {
  TempDir dir;
  Database db(dir / "t.db");
  add_rule_tables(db);
  add_trial(db, 1, "old");
  add_trial(db, 2, "other");
  const size_t rows = rows_of(db, 1, "old").size();
  try {
    rename_trial(db, "old", "other");
    ADD_FAILURE() << "renamed onto an existing trial";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("exists already"), std::string::npos) << e.what();
  }
  rename_trial(db, "old", "new");
  EXPECT_EQ(rows_of(db, 1, "new").size(), rows);
  EXPECT_EQ(count(db, "SELECT count(*) FROM rule_finding WHERE trial = 'old'"), 0);
  EXPECT_EQ(count(db, "SELECT count(*) FROM rule_mystate WHERE trial = 'new'"), 1);
}

TEST(FollowerClaim, AFollowedTrialIsRefusedNamingTheFollowerUntilTheClaimGoes) {
  TempDir dir;
  Database db(dir / "t.db");
  add_rule_tables(db);
  add_trial(db, 1, "busy");
  {
    HeldClaim claim(db, 1);
    EXPECT_TRUE(claim.held());
    for (bool rm : {true, false}) {
      try {
        if (rm) remove_trial(db, "busy");
        else rename_trial(db, "busy", "elsewhere");
        ADD_FAILURE() << (rm ? "removed" : "renamed") << " a followed trial";
      } catch (const Error& e) {
        const std::string msg = e.what();
        EXPECT_NE(msg.find("being followed"), std::string::npos) << msg;
        EXPECT_NE(msg.find("pid " + std::to_string(getpid())), std::string::npos) << msg;
        EXPECT_NE(msg.find(" UTC"), std::string::npos) << msg;
      }
    }
    EXPECT_EQ(count(db, "SELECT count(*) FROM trial WHERE name = 'busy'"), 1);
  }
  // Given back: no longer busy.
  EXPECT_EQ(count(db, "SELECT count(*) FROM trial_follower"), 0);
  remove_trial(db, "busy");
  EXPECT_EQ(count(db, "SELECT count(*) FROM trial"), 0);
}

TEST(FollowerClaim, ACrashedFollowersClaimExpires) {
  TempDir dir;
  Database db(dir / "t.db");
  add_rule_tables(db);
  add_trial(db, 1, "a");
  add_trial(db, 2, "b");
  // A process of this host that took a claim and died without giving it back.
  pid_t child = fork();
  if (child == 0) {
    Database own(dir / "t.db", OpenMode::kExisting);
    HeldClaim* leaked = new HeldClaim(own, 1);  // never destroyed: as a crash leaves it
    (void)leaked;
    _exit(0);
  }
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_EQ(count(db, "SELECT count(*) FROM trial_follower WHERE trial_id = 1"), 1);
  EXPECT_TRUE(live_followers(db, 1).empty());
  EXPECT_EQ(count(db, "SELECT count(*) FROM trial_follower"), 0);  // deleted by who found it
  // Another host's claim lives while its heartbeat is recent.
  db.exec("INSERT INTO trial_follower VALUES (2, 'elsewhere', 1, 0, 0, (julianday('now') - 2440587.5) * 86400)");
  EXPECT_EQ(live_followers(db, 2).size(), 1u);
  EXPECT_THROW(remove_trial(db, "b"), Error);
  db.exec("UPDATE trial_follower SET heartbeat = heartbeat - " + std::to_string(kClaimExpirySeconds + 1));
  EXPECT_TRUE(live_followers(db, 2).empty());
  remove_trial(db, "b");
}

TEST(FollowerClaim, AClaimOnARemovedTrialIsNotHeld) {
  TempDir dir;
  Database db(dir / "t.db");
  HeldClaim claim(db, 7);  // no trial 7
  EXPECT_FALSE(claim.held());
}

TEST(Compaction, GivesTheSpaceOfARemovedTrialBack) {
  TempDir dir;
  Database db(dir / "t.db");
  add_rule_tables(db);
  {
    Transaction tx(db);
    add_trial(db, 1, "big", 200);  // 200 blobs of 64 KiB
    add_trial(db, 2, "small");
    tx.commit();
  }
  const std::vector<std::string> small = rows_of(db, 2, "small");
  {
    Transaction tx(db);
    remove_trial(db, "big");
    tx.commit();
  }
  uint64_t last_done = 0, last_total = 0, calls = 0;
  const CompactionResult r = compact(db, [&](uint64_t done, uint64_t total) {
    EXPECT_LE(done, total);
    last_done = done, last_total = total, ++calls;
  });
  EXPECT_GT(calls, 0u);
  EXPECT_EQ(last_done, last_total);
  EXPECT_GT(r.bytes_before, 200u * kBlobBytes);
  EXPECT_LT(r.bytes_after, r.bytes_before - 190u * kBlobBytes);
  EXPECT_EQ(rows_of(db, 2, "small"), small);
}

}  // namespace
