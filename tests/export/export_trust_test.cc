// trialdb export trusts nothing in the folder it writes into and loses no trial name: every name
// (NULL, __HIVE_DEFAULT_PARTITION__, '=', '/', '%', quotes, commas, a newline, non-ASCII) comes
// back from DuckDB's Hive partitioning exactly; Athena DDL refuses a name its projection cannot
// hold; two databases exporting a trial of one name into one folder are refused (unless
// --replace) and never remove each other's trials; a manifest listing a path outside its
// partition, or a symlink planted in the dataset, is an error naming it, and nothing outside
// the dataset is written or removed.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>

#include <nlohmann/json.hpp>

#include "common/file_bytes.h"
#include "common/temp_dir.h"
#include "duckdb_query.h"
#include "export/ddl.h"
#include "export/manifest.h"
#include "export_compare.h"
#include "export_steps.h"
#include "schema/database.h"
#include "schema/status.h"
#include "sqlext/register.h"

namespace trialdb::exporter {
namespace {

namespace fs = std::filesystem;
using test::Cell;
using test::Row;

class ExportTrust : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::string why = test::duckdb_unavailable(); !why.empty()) {
      if (why == "node is not installed") GTEST_SKIP() << why;
      FAIL() << why;
    }
    ASSERT_EQ(test::trialdb({"synth", job_, "--steps", "3", "--tensors", "2", "--elements", "10"}), 0);
  }

  // Runs export; returns its exit code, its standard error in `err`.
  int export_db(const std::string& db, std::vector<std::string> extra, std::string* err = nullptr) {
    std::vector<std::string> args = {"export", "--db", db, "--out", out_};
    args.insert(args.end(), extra.begin(), extra.end());
    const int rc = test::trialdb(args, "", dir_ / "err");
    if (err) *err = test::file_bytes(dir_ / "err");
    return rc;
  }

  test::TempDir dir_{"trialdb_export_trust"};
  const std::string job_ = dir_ / "job", db_ = dir_ / "t.db", out_ = dir_ / "out";
};

TEST_F(ExportTrust, EveryTrialNameComesBackFromDuckDbExactly) {
  const std::vector<std::string> names = {"NULL",
                                          "__HIVE_DEFAULT_PARTITION__",
                                          "null",
                                          "Null",
                                          "__hive_default_partition__",
                                          "a=b",
                                          "a/b",
                                          "../up",
                                          "50%",
                                          "%41",
                                          "it's \"q\"",
                                          "a,b",
                                          "line\nbreak",
                                          "tab\there",
                                          "h\xC3\xA9llo \xE6\x97\xA5\xE6\x9C\xAC",
                                          "sp ace+plus",
                                          "#hash?{x}[y]^z*:\\"};
  for (const std::string& name : names)
    ASSERT_EQ(test::trialdb({"ingest", job_, "--db", db_, "--name", name}), 0) << name;
  ASSERT_EQ(export_db(db_, {}), 0);
  const std::vector<Row> got = test::duckdb_rows(
      {"SELECT DISTINCT trial FROM " + test::export_dataset_sql(out_, "reductions") + " ORDER BY trial"});
  std::set<std::string> expected(names.begin(), names.end()), seen;
  for (const Row& r : got) {
    ASSERT_TRUE(r.at(0).has_value()) << "a trial read back as NULL";
    seen.insert(*r[0]);
  }
  EXPECT_EQ(seen, expected);
  // Each folder name is what Hive writes, the NULL-like names with their first character escaped.
  EXPECT_EQ(partition_folder("a=b/c%"), "trial=a%3Db%2Fc%25");
  EXPECT_EQ(partition_folder("NULL"), "trial=%4EULL");
  EXPECT_EQ(partition_folder("__HIVE_DEFAULT_PARTITION__"), "trial=%5F_HIVE_DEFAULT_PARTITION__");
  EXPECT_EQ(partition_folder("null"), "trial=%6Eull");
  EXPECT_EQ(partition_folder("line\n"), "trial=line%0A");
}

TEST_F(ExportTrust, AthenaDdlRefusesANameItsProjectionCannotHold) {
  for (const std::string& name : {std::string("a,b"), std::string("a=b"), std::string("NULL")}) {
    try {
      engine_ddl(Engine::kAthena, "s3://b/p", ValuesExport::kNone, {"ok-1", name});
      ADD_FAILURE() << name << " was projected";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("'" + name + "'"), std::string::npos) << e.what();
    }
  }
  EXPECT_NE(engine_ddl(Engine::kAthena, "s3://b/p", ValuesExport::kNone, {"run-1", "run_2.x"})
                .find("'projection.trial.values' = 'run-1,run_2.x'"),
            std::string::npos);
  // Trino and Spark read the folder names: any name.
  EXPECT_NO_THROW(engine_ddl(Engine::kTrino, "s3://b/p", ValuesExport::kNone, {"a,b"}));
}

TEST_F(ExportTrust, ATrialAnotherDatabaseExportedIsRefusedUnlessReplaced) {
  const std::string other_db = dir_ / "other.db", other_job = dir_ / "other_job";
  ASSERT_EQ(test::trialdb({"synth", other_job, "--steps", "5", "--tensors", "1", "--elements", "5", "--seed", "3"}), 0);
  ASSERT_EQ(test::trialdb({"ingest", job_, "--db", db_, "--name", "debug-output"}), 0);
  ASSERT_EQ(test::trialdb({"ingest", job_, "--db", db_, "--name", "only-mine"}), 0);
  ASSERT_EQ(test::trialdb({"ingest", other_job, "--db", other_db, "--name", "debug-output"}), 0);
  ASSERT_EQ(export_db(db_, {}), 0);
  const std::set<std::string> before = test::files_under(out_);
  const std::string manifest = out_ + "/_manifests/trial=debug-output.json";
  const std::string first = test::file_bytes(manifest);

  std::string err;
  EXPECT_EQ(export_db(other_db, {}, &err), 1);
  EXPECT_NE(err.find(fs::path(db_).filename().string()), std::string::npos) << err;
  EXPECT_NE(err.find(fs::path(other_db).filename().string()), std::string::npos) << err;
  EXPECT_NE(err.find("--replace"), std::string::npos) << err;
  EXPECT_EQ(test::files_under(out_), before);
  EXPECT_EQ(test::file_bytes(manifest), first);

  // --replace takes the trial over; the first database's other trial stays.
  ASSERT_EQ(export_db(other_db, {"--replace"}), 0);
  const auto written = nlohmann::json::parse(test::file_bytes(manifest));
  EXPECT_NE(written["database"]["path"].get<std::string>().find("other.db"), std::string::npos);
  EXPECT_TRUE(test::files_under(out_).count("reductions/trial=only-mine/part-0.parquet"));
  const std::string fresh = dir_ / "fresh";
  ASSERT_EQ(test::trialdb({"export", "--db", other_db, "--out", fresh}), 0);
  const auto rows = [&](const std::string& folder) {
    return test::duckdb_rows({"SELECT count(*), sum(value) FROM " + test::export_dataset_sql(folder, "reductions") +
                              " WHERE trial = 'debug-output' AND NOT isnan(value)"});
  };
  EXPECT_EQ(rows(out_), rows(fresh));
  // And the first database, exporting again, finds its trial taken.
  EXPECT_EQ(export_db(db_, {}, &err), 1);
  EXPECT_TRUE(test::files_under(out_).count("reductions/trial=only-mine/part-0.parquet"));
}

// A database of schema version 8, before the identities and change record an export records:
// a read-only open reads it as it is, and export refuses it, naming the command that upgrades
// it, before writing anything; once upgraded by that command it exports.
TEST_F(ExportTrust, ADatabaseOfAnOlderSchemaIsRefusedWithTheCommandThatUpgradesIt) {
  ASSERT_EQ(test::trialdb({"ingest", job_, "--db", db_}), 0);
  {
    Database db(db_, OpenMode::kExisting);
    // SQLite checks every view when a column goes; the histogram views call the extension's functions.
    ASSERT_EQ(trialdb_register_sql_functions(db.handle()), SQLITE_OK);
    db.exec("DROP TABLE database_identity");
    db.exec("ALTER TABLE trial DROP COLUMN uid");
    db.exec("ALTER TABLE trial DROP COLUMN change_seq");
    db.exec("ALTER TABLE step DROP COLUMN change_seq");
    db.exec("UPDATE schema_version SET version = 8");
  }
  std::string err;
  EXPECT_EQ(export_db(db_, {}, &err), 1);
  EXPECT_NE(err.find("schema version 8"), std::string::npos) << err;
  EXPECT_NE(err.find("trialdb compact --db " + db_), std::string::npos) << err;
  EXPECT_EQ(err.find("no such"), std::string::npos) << err;
  EXPECT_FALSE(fs::exists(out_));
  ASSERT_EQ(test::trialdb({"compact", "--db", db_, "--quiet"}), 0);
  ASSERT_EQ(export_db(db_, {}), 0);
  EXPECT_TRUE(test::files_under(out_).count("reductions/trial=job/part-0.parquet"));
}

// Rewrites the manifest of trial `t` in `out` with `edit`.
void edit_manifest(const std::string& out, const std::function<void(nlohmann::json&)>& edit) {
  const std::string path = out + "/_manifests/trial=t.json";
  nlohmann::json j = nlohmann::json::parse(test::file_bytes(path));
  edit(j);
  std::ofstream(path, std::ios::trunc) << j.dump(1);
}

TEST_F(ExportTrust, AManifestListingAPathOutsideItsPartitionRemovesNothing) {
  const std::string victim = dir_ / "victim.txt";
  const std::string grown = dir_ / "grown";
  ASSERT_EQ(test::trialdb({"synth", grown, "--steps", "6", "--tensors", "2", "--elements", "10"}), 0);
  test::copy_trial(
      grown, dir_ / "live", [](int64_t step, const std::string&) { return step < 3; }, false);
  ASSERT_EQ(test::trialdb({"ingest", dir_ / "live", "--db", db_, "--name", "t"}), 0);
  ASSERT_EQ(export_db(db_, {}), 0);
  test::copy_trial(grown, dir_ / "live", [](int64_t, const std::string&) { return true; });
  ASSERT_EQ(test::trialdb({"ingest", dir_ / "live", "--db", db_, "--name", "t"}), 0);
  const std::string saved = test::file_bytes(out_ + "/_manifests/trial=t.json");
  for (const std::string& hostile :
       {std::string("../victim.txt"), std::string("trials/trial=t/../../../victim.txt"), victim,
        std::string("steps/trial=u/part-0.parquet"), std::string("trials/trial=t/part-0.parquet/x")}) {
    std::ofstream(victim) << "precious";
    std::ofstream(out_ + "/_manifests/trial=t.json", std::ios::trunc) << saved;
    for (const char* where : {"files", "pending"}) {
      edit_manifest(out_, [&](nlohmann::json& j) {
        if (std::string(where) == "files") j["tables"]["trials"]["files"][0]["path"] = hostile;
        else j["pending"].push_back(hostile);
      });
      std::string err;
      EXPECT_EQ(export_db(db_, {}, &err), 1) << hostile;
      EXPECT_TRUE(fs::exists(victim)) << hostile << " in " << where << " removed the victim";
      EXPECT_NE(err.find("_manifests/trial=t.json"), std::string::npos) << err;
      EXPECT_NE(err.find(hostile), std::string::npos) << err;
    }
  }
  // Many bad entries are reported at once, by count.
  std::ofstream(out_ + "/_manifests/trial=t.json", std::ios::trunc) << saved;
  edit_manifest(out_, [](nlohmann::json& j) {
    for (int i = 0; i < 20000; ++i) j["pending"].push_back("../x" + std::to_string(i));
  });
  std::string err;
  EXPECT_EQ(export_db(db_, {}, &err), 1);
  EXPECT_NE(err.find("20000 path(s)"), std::string::npos) << err;
}

TEST_F(ExportTrust, ASymlinkInTheDatasetIsRefusedAndNotFollowed) {
  ASSERT_EQ(test::trialdb({"ingest", job_, "--db", db_, "--name", "t"}), 0);
  const std::string elsewhere = dir_ / "elsewhere";
  fs::create_directories(elsewhere);
  // A partition folder planted as a symlink.
  fs::create_directories(out_ + "/reductions");
  fs::create_directory_symlink(elsewhere, out_ + "/reductions/trial=t");
  std::string err;
  EXPECT_EQ(export_db(db_, {}, &err), 1);
  EXPECT_NE(err.find("reductions/trial=t"), std::string::npos) << err;
  EXPECT_NE(err.find("symbolic link"), std::string::npos) << err;
  EXPECT_TRUE(fs::is_empty(elsewhere)) << "written through the symlink";
  fs::remove(out_ + "/reductions/trial=t");

  // A manifest, and a part file, planted as symlinks to a file outside.
  ASSERT_EQ(export_db(db_, {}), 0);
  const std::string victim = dir_ / "victim.txt";
  std::ofstream(victim) << "precious";
  const std::string part = out_ + "/trials/trial=t/part-0.parquet";
  fs::remove(part);
  fs::create_symlink(victim, part);
  ASSERT_EQ(test::trialdb({"rename", "--db", db_, "--trial", "t", "--to", "t2"}), 0);
  EXPECT_EQ(export_db(db_, {}, &err), 1);
  EXPECT_NE(err.find(part), std::string::npos) << err;
  EXPECT_EQ(test::file_bytes(victim), "precious");
  fs::remove(part);
  const std::string manifest = out_ + "/_manifests/trial=t2.json";
  fs::remove(manifest);
  fs::create_symlink(victim, manifest);
  EXPECT_EQ(export_db(db_, {}, &err), 1);
  EXPECT_NE(err.find(manifest), std::string::npos) << err;
  EXPECT_EQ(test::file_bytes(victim), "precious");
}

}  // namespace
}  // namespace trialdb::exporter
