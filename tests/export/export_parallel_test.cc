// Files written at once (ExportOptions::threads over a connection opened kReadOnlyShared) are
// the files written one at a time, byte for byte, for a new export and for one that rewrites
// ranges of a grown trial; and a file that fails leaves what one at a time leaves: the files
// before it committed, its error thrown, nothing of the files after it.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>

#include "common/file_bytes.h"
#include "common/temp_dir.h"
#include "export/exporter.h"
#include "export_steps.h"
#include "schema/database.h"
#include "sqlext/register.h"

namespace trialdb::exporter {
namespace {

constexpr unsigned kThreads = 4;

// The export of every trial of `db` into `out`, with `threads` files at once.
void export_all(const std::string& db_path, ExportTarget& target, unsigned threads) {
  Database db(db_path, threads > 1 ? OpenMode::kReadOnlyShared : OpenMode::kReadOnly);
  ASSERT_EQ(trialdb_register_sql_functions(db.handle()), SQLITE_OK);
  ExportOptions options;
  options.trials = {"job"};
  options.values = ValuesExport::kInline;
  options.threads = threads;
  export_trials(db, target, options);
}

// Every file under `dir` and its bytes.
std::map<std::string, std::string> contents(const std::string& dir) {
  std::map<std::string, std::string> files;
  for (const std::string& f : test::files_under(dir)) files[f] = test::file_bytes(dir + "/" + f);
  return files;
}

TEST(ExportParallel, FilesWrittenAtOnceAreTheFilesWrittenOneAtATime) {
  test::TempDir dir("trialdb_export_parallel");
  const std::string full = dir / "full", job = dir / "job", db = dir / "t.db";
  ASSERT_EQ(test::trialdb({"synth", full, "--steps", "9", "--tensors", "3", "--elements", "300"}), 0);
  test::copy_trial(
      full, job, [](int64_t step, const std::string&) { return step < 4; }, false);
  ASSERT_EQ(test::trialdb({"ingest", job, "--db", db}), 0);
  LocalTarget one(dir / "one"), many(dir / "many");
  export_all(db, one, 1);
  export_all(db, many, kThreads);
  const auto first = contents(dir / "one");
  ASSERT_GT(first.size(), 10u);
  EXPECT_EQ(contents(dir / "many"), first);

  // Grown and ended: the last file of each table rewritten, a new one for the new steps.
  test::copy_trial(full, job, [](int64_t, const std::string&) { return true; });
  ASSERT_EQ(test::trialdb({"ingest", job, "--db", db}), 0);
  export_all(db, one, 1);
  export_all(db, many, kThreads);
  const auto second = contents(dir / "one");
  EXPECT_NE(second, first);
  EXPECT_EQ(contents(dir / "many"), second);
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
  std::map<unsigned, std::string> errors;
  for (unsigned threads : {1u, kThreads}) {
    FailingTarget target(dir / std::to_string(threads), "distributions/");
    try {
      export_all(db, target, threads);
      ADD_FAILURE() << "the export did not fail with " << threads << " threads";
    } catch (const Error& e) {
      errors[threads] = e.what();
    }
  }
  EXPECT_NE(errors[1].find("disk full"), std::string::npos) << errors[1];
  EXPECT_EQ(errors[kThreads], errors[1]);
  const auto one = contents(dir / "1");
  EXPECT_TRUE(one.count("reductions/trial=job/part-0.parquet"));
  EXPECT_FALSE(one.count("histogram_buckets/trial=job/part-0.parquet"));
  EXPECT_EQ(contents(dir / std::to_string(kThreads)), one);
}

}  // namespace
}  // namespace trialdb::exporter
