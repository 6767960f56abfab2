// Custom rule files are rules, not scripts (rules_sql/rule_file.h): what a rule does not create
// is refused, naming the file and the statement, with exit 1 and the database unchanged; a FIFO
// or a device is not read; the built-ins' idiom (state tables, fold triggers) is allowed.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/common/temp_dir.h"
#include "tests/rules_sql/rules_cli.h"

namespace {

namespace fs = std::filesystem;
using namespace trialdb::test::rules_cli;

std::string bytes_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

const char* const kView =
    "CREATE VIEW rule_mine AS SELECT trial, step, tensor, worker, 1.0 AS value, 'x' AS message FROM rule_now WHERE "
    "0;\n";

TEST(RuleFile, WhatARuleDoesNotCreateIsRefusedAndNothingChanges) {
  TempDir tmp;
  const std::string db = tmp / "t.db";
  ingest(kFixtures + "/pt_bad_init", db, "pt_bad_init", tmp);
  ASSERT_EQ(rules(db, "", tmp).status, 0);
  const int64_t findings = count_findings(db);
  ASSERT_GT(findings, 0);
  const std::string before = bytes_of(db);
  const std::pair<std::string, std::string> hostile[] = {
      {"DELETE FROM value;\n", "statement 1 (DELETE FROM value;) deletes from table value: not allowed"},
      {"DELETE FROM rule_finding;\n", "deletes from table rule_finding"},
      {"INSERT INTO rule_param VALUES (NULL, 'overfit', 'patience', '9');\n", "inserts into table rule_param"},
      {"PRAGMA writable_schema = ON;\n", "PRAGMA writable_schema"},
      {"ATTACH DATABASE ':memory:' AS other;\n", "ATTACH"},
      {"SELECT load_extension('/nonexistent');\n", "calls load_extension"},
      {"CREATE TRIGGER rule_mine_wipe AFTER INSERT ON value BEGIN DELETE FROM value; END;\n",
       "creates or drops trigger rule_mine_wipe on value"},
      {"CREATE TRIGGER rule_mine_fold AFTER UPDATE OF step ON rule_progress BEGIN DELETE FROM value; END;\n",
       "a trigger of rule mine deletes from table value (in rule_mine_fold)"},
      {"CREATE TRIGGER rule_mine_fold AFTER UPDATE OF step ON rule_progress BEGIN DELETE FROM rule_finding; END;\n",
       "deletes from table rule_finding (in rule_mine_fold)"},
      {"CREATE TABLE steps_copy AS SELECT * FROM steps;\n", "creates table steps_copy"},
      {"CREATE VIEW rule_overfit_walk2 AS SELECT 1;\n", "creates or drops view rule_overfit_walk2"},
      {"CREATE VIEW rule_mine_cfg AS SELECT 1;\n", "defines view rule_mine_cfg"},
      {"COMMIT;\n", "controls the transaction"},
      {"CREATE TABLE rule_mine_state (trial TEXT);\nALTER TABLE rule_mine_state RENAME TO escaped;\n",
       "statement 2 (ALTER TABLE rule_mine_state RENAME TO escaped;) alters table rule_mine_state"},
      {"CREATE TEMP VIEW rule_mine_t AS SELECT 1;\n", "temporary"},
  };
  for (const auto& [statement, why] : hostile) {
    const std::string file = tmp / "hostile.sql";
    std::ofstream(file) << "-- @rule mine batch\n" << statement << kView;
    RunResult r = rules(db, "--rule-file " + quote(file), tmp);
    EXPECT_EQ(r.status, 1) << statement;
    EXPECT_NE(r.err.find("--rule-file " + file + ": "), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(why), std::string::npos) << r.err;
    EXPECT_EQ(bytes_of(db), before) << statement;  // the database is unchanged
  }
  EXPECT_EQ(count_findings(db), findings);

  // The built-ins' idiom is allowed: a state table, its index, a fold trigger writing it, helper
  // views, and a view reading them.
  const std::string good = tmp / "good.sql";
  std::ofstream(good)
      << "-- @rule mine step\n"
         "-- @param at_least integer 3 steps seen before a finding\n"
         "CREATE TABLE IF NOT EXISTS rule_mine_seen (trial TEXT, n INTEGER, PRIMARY KEY (trial));\n"
         "CREATE INDEX IF NOT EXISTS rule_mine_seen_n ON rule_mine_seen(n);\n"
         "DROP TRIGGER IF EXISTS rule_mine_fold;\n"
         "CREATE TRIGGER rule_mine_fold AFTER UPDATE OF step ON rule_progress WHEN new.rule = 'mine' BEGIN\n"
         "  INSERT INTO rule_mine_seen VALUES (new.trial, 1)\n"
         "    ON CONFLICT (trial) DO UPDATE SET n = n + 1;\n"
         "END;\n"
         "CREATE VIEW rule_mine_count AS SELECT trial, n FROM rule_mine_seen;\n"
         "CREATE VIEW rule_mine AS SELECT b.trial, b.step, 'steps' AS tensor, NULL AS worker, c.n AS value,\n"
         "  'seen ' || c.n AS message FROM rule_batch b JOIN rule_mine_count c ON c.trial = b.trial,\n"
         "  rule_mine_cfg AS cfg WHERE c.n >= cfg.at_least;\n";
  RunResult r = rules(db, "--rule-file " + quote(good) + " --rule mine", tmp);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(recorded(db, "pt_bad_init")["mine"].size(), 22u);  // 24 steps, from the third on
}

TEST(RuleFile, SpecialFilesAreNotRead) {
  TempDir tmp;
  const std::string db = tmp / "t.db", fifo = tmp / "rule.fifo", big = tmp / "big.sql";
  ingest(kFixtures + "/core_dtypes", db, "core_dtypes", tmp);
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  for (const std::string& file : {std::string("/dev/zero"), fifo}) {
    RunResult r = rules(db, "--rule-file " + quote(file), tmp);  // returns: nothing waits for a writer
    EXPECT_EQ(r.status, 1);
    EXPECT_NE(r.err.find(file + ": not a regular file"), std::string::npos) << r.err;
  }
  {
    std::ofstream out(big);
    out << "-- @rule big batch\n";
    out << std::string(2 << 20, ' ');
  }
  RunResult r = rules(db, "--rule-file " + quote(big), tmp);
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("larger than 1048576 bytes"), std::string::npos) << r.err;
  const std::string undeclared = tmp / "undeclared.sql";
  std::ofstream(undeclared) << kView;
  r = rules(db, "--rule-file " + quote(undeclared), tmp);
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("no declaration"), std::string::npos) << r.err;
  const std::string reserved = tmp / "reserved.sql";
  std::ofstream(reserved) << "-- @rule selected batch\n";
  r = rules(db, "--rule-file " + quote(reserved), tmp);
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("collides with rule_selected_tensors"), std::string::npos) << r.err;
}

}  // namespace
