// Files written at once are the files written one at a time, byte for byte, whether the file
// threads read through the export's connection (opened kReadOnlyShared) or through connections of
// their own (ExportOptions::open_reader), for a new export and for one that rewrites ranges of a
// grown trial; the connections of their own hold the export's snapshot (read_snapshot.h) whatever
// another connection commits meanwhile (and are refused when a file was renamed over the
// database's path), and the export changes no byte of the database; a file
// that fails leaves what one at a time leaves: the files before it committed, its error thrown,
// nothing of the files after it.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "common/file_bytes.h"
#include "common/temp_dir.h"
#include "export/exporter.h"
#include "export/read_snapshot.h"
#include "export_steps.h"
#include "schema/database.h"
#include "sqlext/register.h"

namespace trialdb::exporter {
namespace {

constexpr unsigned kThreads = 4;

// How the files of an export are read.
enum class Reading {
  kOneAtATime,        // one file at a time, on one connection
  kSharedConnection,  // kThreads files at once, all through the export's connection
  kOwnConnections,    // kThreads files at once, each thread through a connection of its own
};

OpenReader reader_of(const std::string& db_path) {
  return [db_path] {
    auto db = std::make_unique<Database>(db_path, OpenMode::kReadOnly);
    if (trialdb_register_sql_functions(db->handle()) != SQLITE_OK) throw Error(ErrorKind::kDatabase, "no functions");
    return db;
  };
}

// The export of every trial of `db` into `out`.
void export_all(const std::string& db_path, ExportTarget& target, Reading reading,
                const std::function<void(const ExportProgress&)>& progress = {}) {
  Database db(db_path, reading == Reading::kSharedConnection ? OpenMode::kReadOnlyShared : OpenMode::kReadOnly);
  ASSERT_EQ(trialdb_register_sql_functions(db.handle()), SQLITE_OK);
  ExportOptions options;
  options.trials = {"job"};
  options.values = ValuesExport::kInline;
  options.threads = reading == Reading::kOneAtATime ? 1 : kThreads;
  if (reading == Reading::kOwnConnections) options.open_reader = reader_of(db_path);
  options.progress = progress;
  export_trials(db, target, options);
}

// A file's bytes and modification time, or nothing when there is none.
std::pair<std::string, int64_t> state_of(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return {};
  return {test::file_bytes(path), int64_t{st.st_mtim.tv_sec} * 1000000000 + st.st_mtim.tv_nsec};
}

// Every file under `dir` and its bytes.
std::map<std::string, std::string> contents(const std::string& dir) {
  std::map<std::string, std::string> files;
  for (const std::string& f : test::files_under(dir)) files[f] = test::file_bytes(dir + "/" + f);
  return files;
}

// The files of two folders' contents that differ or are in one only, or "".
std::string differing(const std::map<std::string, std::string>& a, const std::map<std::string, std::string>& b) {
  std::string names;
  for (const auto& [file, bytes] : a)
    if (!b.count(file) || b.at(file) != bytes) names += file + " ";
  for (const auto& [file, bytes] : b)
    if (!a.count(file)) names += file + " ";
  return names;
}

TEST(ExportParallel, FilesWrittenAtOnceAreTheFilesWrittenOneAtATime) {
  test::TempDir dir("trialdb_export_parallel");
  const std::string full = dir / "full", job = dir / "job", db = dir / "t.db";
  ASSERT_EQ(test::trialdb({"synth", full, "--steps", "9", "--tensors", "3", "--elements", "300"}), 0);
  test::copy_trial(
      full, job, [](int64_t step, const std::string&) { return step < 4; }, false);
  ASSERT_EQ(test::trialdb({"ingest", job, "--db", db}), 0);
  LocalTarget one(dir / "one"), shared(dir / "shared"), own(dir / "own");
  const auto export_three = [&] {
    export_all(db, one, Reading::kOneAtATime);
    export_all(db, shared, Reading::kSharedConnection);
    // The export only reads: the database and its WAL keep their bytes and times.
    const auto db_before = state_of(db), wal_before = state_of(db + "-wal");
    export_all(db, own, Reading::kOwnConnections);
    EXPECT_EQ(state_of(db), db_before);
    EXPECT_EQ(state_of(db + "-wal"), wal_before);
    EXPECT_FALSE(std::filesystem::exists(db + "-journal"));
  };
  export_three();
  const auto first = contents(dir / "one");
  ASSERT_GT(first.size(), 10u);
  EXPECT_EQ(contents(dir / "shared"), first);
  EXPECT_EQ(contents(dir / "own"), first);

  // Grown and ended: the last file of each table rewritten, a new one for the new steps.
  test::copy_trial(full, job, [](int64_t, const std::string&) { return true; });
  ASSERT_EQ(test::trialdb({"ingest", job, "--db", db}), 0);
  export_three();
  const auto second = contents(dir / "one");
  EXPECT_NE(second, first);
  EXPECT_EQ(contents(dir / "shared"), second);
  EXPECT_EQ(contents(dir / "own"), second);
}

// An ingest that commits while the export writes its files (here at the export's first progress,
// before the step ranges' files are read), adding a worker's values of a step already exported
// and the steps after the last: every file is of the state the export began in.
TEST(ExportParallel, ConnectionsOfTheirOwnReadTheStateTheExportBeganIn) {
  test::TempDir dir("trialdb_export_parallel_snapshot");
  const std::string full = dir / "full", job = dir / "job", db = dir / "t.db";
  ASSERT_EQ(test::trialdb({"synth", full, "--steps", "9", "--tensors", "3", "--elements", "300", "--workers", "2"}), 0);
  // Steps 0-3 but worker 1's events of step 2: step 3 completes, and step 2 with it.
  test::copy_trial(
      full, job,
      [](int64_t step, const std::string& worker) { return step < 4 && !(step == 2 && worker == "worker_1"); }, false);
  test::copy_index_file(full, job, 2, "worker_1");
  ASSERT_EQ(test::trialdb({"ingest", job, "--db", db}), 0);
  LocalTarget before(dir / "before"), during(dir / "during"), after(dir / "after");
  export_all(db, before, Reading::kOneAtATime);

  test::copy_trial(full, job, [](int64_t, const std::string&) { return true; });
  int ingests = 0;
  export_all(db, during, Reading::kOwnConnections, [&](const ExportProgress&) {
    if (ingests++ == 0) {
      EXPECT_EQ(test::trialdb({"ingest", job, "--db", db, "--quiet"}), 0);
    }
  });
  ASSERT_GT(ingests, 0);
  EXPECT_EQ(differing(contents(dir / "during"), contents(dir / "before")), "");
  export_all(db, after, Reading::kOneAtATime);  // the ingest did change what an export reads
  EXPECT_NE(differing(contents(dir / "after"), contents(dir / "before")), "");
}

// A two-step trial of one small tensor, ingested into db_path.
void ingest_small_trial(const test::TempDir& dir, const std::string& db_path) {
  const std::string job = dir / "job";
  ASSERT_EQ(test::trialdb({"synth", job, "--steps", "2", "--tensors", "1", "--elements", "10"}), 0);
  ASSERT_EQ(test::trialdb({"ingest", job, "--db", db_path}), 0);
}

// The rows of a table only the test writes, through `db`.
int64_t test_rows(Database& db) {
  Statement q(db.handle(), "SELECT count(*) FROM snapshot_test");
  return q.step() ? q.int64(0) : -1;
}

// A commit between the readers' transactions (here: as the second reader is opened, after the
// first began its transaction) is seen by all of them or by none.
TEST(ReadSnapshot, ReadersHoldTheExportsStateWhateverIsCommittedMeanwhile) {
  test::TempDir dir("trialdb_read_snapshot");
  const std::string db_path = dir / "t.db";
  ASSERT_NO_FATAL_FAILURE(ingest_small_trial(dir, db_path));
  Database writer(db_path, OpenMode::kExisting);
  writer.exec("CREATE TABLE snapshot_test(x)");
  Database db(db_path, OpenMode::kReadOnly);
  int opened = 0;
  const OpenReader open = reader_of(db_path);
  {
    const ReadSnapshot snapshot(db, 2, [&] {
      if (++opened == 2) writer.exec("INSERT INTO snapshot_test VALUES (1)");
      return open();
    });
    ASSERT_EQ(snapshot.readers().size(), 2u);
    EXPECT_EQ(opened, 2);
    EXPECT_EQ(test_rows(db), 1);
    for (const auto& r : snapshot.readers()) EXPECT_EQ(test_rows(*r), 1);
    // Held: a later commit is seen by none of them.
    writer.exec("INSERT INTO snapshot_test VALUES (2)");
    EXPECT_EQ(test_rows(db), 1);
    for (const auto& r : snapshot.readers()) EXPECT_EQ(test_rows(*r), 1);
  }
  EXPECT_EQ(test_rows(db), 2);  // and ended with the snapshot
}

TEST(ReadSnapshot, WithoutReadersTheExportsConnectionReadsAlone) {
  test::TempDir dir("trialdb_read_snapshot_none");
  const std::string db_path = dir / "t.db";
  ASSERT_NO_FATAL_FAILURE(ingest_small_trial(dir, db_path));
  Database db(db_path, OpenMode::kReadOnly);
  int opened = 0;
  const ReadSnapshot snapshot(db, 2, [&]() -> std::unique_ptr<Database> {
    if (++opened == 2) throw Error(ErrorKind::kDatabase, "cannot open");
    return reader_of(db_path)();
  });
  EXPECT_TRUE(snapshot.readers().empty());
  EXPECT_FALSE(sqlite3_get_autocommit(db.handle()));  // in its read transaction
}

// A database file renamed over the path once the export's connection is open: a reader opened by
// the path would read that other file, so same_file_reader refuses it and the export's connection
// reads alone.
TEST(ReadSnapshot, AFileRenamedOverTheDatabaseGivesNoReaders) {
  test::TempDir dir("trialdb_read_snapshot_renamed");
  const std::string db_path = dir / "t.db", other_path = dir / "other.db";
  ASSERT_NO_FATAL_FAILURE(ingest_small_trial(dir, db_path));
  std::filesystem::copy_file(db_path, other_path);
  Database(other_path, OpenMode::kExisting).exec("CREATE TABLE snapshot_test(x); INSERT INTO snapshot_test VALUES (1)");
  const OpenReader same_file = same_file_reader(db_path, [](const std::string& path) { return reader_of(path)(); });
  Database db(db_path, OpenMode::kReadOnly);
  ASSERT_EQ(std::rename(other_path.c_str(), db_path.c_str()), 0);
  {
    const ReadSnapshot by_path(db, 1, reader_of(db_path));  // what the check prevents
    ASSERT_EQ(by_path.readers().size(), 1u);
    EXPECT_EQ(test_rows(*by_path.readers()[0]), 1);  // the other file's table, which `db` lacks
    EXPECT_THROW(test_rows(db), Error);
  }
  const ReadSnapshot snapshot(db, 2, same_file);
  EXPECT_TRUE(snapshot.readers().empty());
  EXPECT_FALSE(sqlite3_get_autocommit(db.handle()));  // in its read transaction, alone
}

TEST(ReadSnapshot, ReadersOfTheSameFileJoin) {
  test::TempDir dir("trialdb_read_snapshot_same");
  const std::string db_path = dir / "t.db";
  ASSERT_NO_FATAL_FAILURE(ingest_small_trial(dir, db_path));
  const OpenReader same_file = same_file_reader(db_path, [](const std::string& path) { return reader_of(path)(); });
  Database db(db_path, OpenMode::kReadOnly);
  const ReadSnapshot snapshot(db, 2, same_file);
  EXPECT_EQ(snapshot.readers().size(), 2u);
}

// A local folder whose files under `failing` fail to be written.
class FailingTarget : public LocalTarget {
 public:
  FailingTarget(std::string root, std::string failing) : LocalTarget(std::move(root)), failing_(std::move(failing)) {}
  std::unique_ptr<OutputFile> create(const std::string& path) override {
    std::unique_ptr<OutputFile> file = LocalTarget::create(path);
    if (path.rfind(failing_, 0) != 0) return file;
    return std::make_unique<FailingFile>(std::move(file), path);
  }

 private:
  class FailingFile : public OutputFile {
   public:
    FailingFile(std::unique_ptr<OutputFile> file, std::string path) : file_(std::move(file)), path_(std::move(path)) {}
    void write(std::string_view) override { throw Error(ErrorKind::kIo, "cannot write " + path_ + ": disk full"); }
    void commit() override { file_->commit(); }

   private:
    std::unique_ptr<OutputFile> file_;
    std::string path_;
  };
  std::string failing_;
};

TEST(ExportParallel, AFailingFileLeavesWhatOneAtATimeLeaves) {
  test::TempDir dir("trialdb_export_parallel_fail");
  const std::string job = dir / "job", db = dir / "t.db";
  ASSERT_EQ(test::trialdb({"synth", job, "--steps", "6", "--tensors", "3", "--elements", "300"}), 0);
  ASSERT_EQ(test::trialdb({"ingest", job, "--db", db}), 0);
  // distributions is planned after reductions and before histogram_buckets and the values.
  std::map<Reading, std::string> errors;
  for (Reading reading : {Reading::kOneAtATime, Reading::kSharedConnection, Reading::kOwnConnections}) {
    const std::string name = std::to_string(static_cast<int>(reading));
    FailingTarget target(dir / name, "distributions/");
    try {
      export_all(db, target, reading);
      ADD_FAILURE() << "the export did not fail reading " << name;
    } catch (const Error& e) {
      errors[reading] = e.what();
    }
  }
  const std::string& one_error = errors[Reading::kOneAtATime];
  EXPECT_NE(one_error.find("disk full"), std::string::npos) << one_error;
  EXPECT_EQ(errors[Reading::kSharedConnection], one_error);
  EXPECT_EQ(errors[Reading::kOwnConnections], one_error);
  const auto one = contents(dir / "0");
  EXPECT_TRUE(one.count("reductions/trial=job/part-0.parquet"));
  EXPECT_FALSE(one.count("histogram_buckets/trial=job/part-0.parquet"));
  EXPECT_EQ(contents(dir / "1"), one);
  EXPECT_EQ(contents(dir / "2"), one);
}

}  // namespace
}  // namespace trialdb::exporter
