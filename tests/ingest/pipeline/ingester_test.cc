// Ingester behaviour on real fixtures: smdebug quirks, incremental and idempotent runs, step
// completeness across workers, files a live job has not finished, and damaged input.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <limits>
#include <cmath>
#include <cstring>
#include <random>
#include <set>

#include "ingest/pipeline/ingester.h"
#include "ingest/source/local_source.h"
#include "ingest/source/mapped_range.h"
#include "ingest/writer/trial_writer.h"
#include "schema/database.h"
#include "schema/value_blob.h"
#include "tests/common/file_bytes.h"
#include "tests/common/rows_text.h"
#include "tests/common/temp_dir.h"

using namespace trialdb;

// A program installs the SIGBUS handler before anything is mapped (the CLI's main does); so do
// these tests, before any test runs.
static const bool kSigbusHandlerInstalled = (MappedRange::install_sigbus_handler(), true);
using trialdb::test::file_bytes;
using trialdb::test::rows_text;
using trialdb::test::TempDir;
namespace fs = std::filesystem;

namespace {

const fs::path kFixtures = TRIALDB_FIXTURES;

fs::path copy_fixture(const std::string& name, const fs::path& into) {
  fs::path dst = into / name;
  fs::copy(kFixtures / name, dst, fs::copy_options::recursive);
  for (auto& e : fs::recursive_directory_iterator(dst))
    fs::permissions(e.path(), fs::perms::owner_all, fs::perm_options::add);
  return dst;
}

int64_t scalar(Database& db, const std::string& sql) {
  Statement q(db.handle(), sql);
  EXPECT_TRUE(q.step()) << sql;
  return q.int64(0);
}

std::string text(Database& db, const std::string& sql) {
  Statement q(db.handle(), sql);
  if (!q.step()) return "<no row>";
  return q.is_null(0) ? "<null>" : q.text(0);
}

IngestStats ingest(Database& db, const fs::path& trial, const std::string& name = "") {
  LocalSource src(trial.string());
  IngestOptions o;
  o.name = name;
  Ingester ing(db, src, o);
  return ing.run_once();
}

// Every public view as one canonical string, to compare whole databases.
std::string dump_views(Database& db) {
  return rows_text(db.handle(),
                   {"SELECT trial, workers, ended FROM trials ORDER BY 1", "SELECT * FROM steps ORDER BY 1, 2",
                    "SELECT * FROM tensors ORDER BY 1, 2", "SELECT * FROM collections ORDER BY 1, 2, 3",
                    "SELECT trial, tensor, step, worker, mode, mode_step, dtype, shape, hex(value) FROM "
                    "tensor_values ORDER BY 1, 2, 3, 4",
                    "SELECT trial, tensor, step, worker, reduction, abs, printf('%.17g', value) FROM reductions "
                    "ORDER BY 1, 2, 3, 4, 5, 6"});
}

}  // namespace

TEST(Ingester, CoreDtypesFollowsSmdebug) {
  TempDir tmp;
  Database db((tmp.path / "t.db").string());
  IngestStats s = ingest(db, kFixtures / "core_dtypes");
  EXPECT_TRUE(s.errors.empty());
  EXPECT_TRUE(s.ended);
  EXPECT_EQ(scalar(db, "SELECT count(*) FROM steps WHERE complete"), 7);
  // GLOBAL-mode step 16 has mode_step 5: smdebug files its values under step 5.
  EXPECT_EQ(text(db, "SELECT mode || ':' || mode_step FROM steps WHERE step = 16"), "GLOBAL:5");
  EXPECT_EQ(scalar(db, "SELECT count(*) FROM tensor_values WHERE tensor = 'scalar/loss' AND step = 5"), 1);
  EXPECT_EQ(scalar(db, "SELECT count(*) FROM tensor_values WHERE step = 16"), 0);
  // smdebug reads DT_INT8 as uint8.
  EXPECT_EQ(text(db, "SELECT DISTINCT dtype FROM tensor_values WHERE tensor = 'dtype/int8'"), "uint8");
  // 0-d values are reported with shape [1], as smdebug does; the blob keeps ndim 0.
  EXPECT_EQ(text(db, "SELECT shape FROM tensor_values WHERE tensor = 'dtype/float32' AND step = 10"), "[1]");
  EXPECT_EQ(
      scalar(db, "SELECT unicode(substr(value, 3, 1)) FROM tensor_values WHERE tensor = 'dtype/float32' AND step = 10"),
      0);
  // Dtypes smdebug cannot read keep their values but offer no reductions (parity).
  EXPECT_EQ(text(db, "SELECT DISTINCT dtype FROM tensor_values WHERE tensor = 'dtype/int16'"), "int16");
  EXPECT_EQ(scalar(db, "SELECT count(*) FROM reductions WHERE tensor = 'dtype/int16'"), 0);
  // Reductions-only tensor: saved shape, no value, the hook's reductions.
  EXPECT_EQ(text(db, "SELECT shape FROM tensor_values WHERE tensor = 'grad/only_reduced' AND step = 1"), "[100]");
  EXPECT_EQ(text(db, "SELECT value FROM tensor_values WHERE tensor = 'grad/only_reduced' AND step = 1"), "<null>");
  EXPECT_GT(
      scalar(db,
             "SELECT count(*) FROM reductions WHERE tensor = 'grad/only_reduced' AND reduction = 'mean' AND abs = 1"),
      0);
  EXPECT_EQ(scalar(db, "SELECT count(*) FROM tensors WHERE tensor LIKE 'smdebug/%'"), 0);
  // Empty tensor: a row, no reductions. Strings: dtype string, no reductions.
  EXPECT_EQ(text(db, "SELECT shape FROM tensor_values WHERE tensor = 'empty/t' AND step = 1"), "[0,4]");
  EXPECT_EQ(scalar(db, "SELECT count(*) FROM reductions WHERE tensor IN ('empty/t', 'text/labels')"), 0);
  EXPECT_EQ(text(db, "SELECT DISTINCT dtype FROM tensor_values WHERE tensor = 'text/labels'"), "string");
  // A scalar's derived reductions (stored once, expanded by the view).
  EXPECT_EQ(text(db,
                 "SELECT group_concat(reduction || '=' || value, ' ') FROM (SELECT * FROM reductions "
                 "WHERE tensor = 'scalar/loss' AND step = 10 AND abs = 0 ORDER BY reduction)"),
            "l1=1.5 l2=1.5 max=1.5 mean=1.5 min=1.5 prod=1.5 std=0.0 sum=1.5 variance=0.0");
}

TEST(Ingester, SecondRunAddsNothing) {
  TempDir tmp;
  Database db((tmp.path / "t.db").string());
  ingest(db, kFixtures / "pt_reductions");
  std::string first = dump_views(db);
  IngestStats again = ingest(db, kFixtures / "pt_reductions");
  EXPECT_EQ(again.files_ingested, 0u);
  EXPECT_EQ(dump_views(db), first);
}

// A collections file that lands after every tensor was catalogued: the next run resolves the
// membership of the tensors already stored (listed names and include_regex matches) exactly as an
// ingest that had the file from the start.
TEST(Ingester, LateCollectionsFileResolvesStoredTensors) {
  TempDir tmp;
  fs::path trial = copy_fixture("pt_bad_init", tmp.path);
  fs::rename(trial / "collections", tmp.path / "collections");
  Database db((tmp.path / "late.db").string());
  ingest(db, trial, "t");
  EXPECT_EQ(scalar(db, "SELECT count(*) FROM collections"), 0);
  fs::rename(tmp.path / "collections", trial / "collections");
  ingest(db, trial, "t");
  Database whole((tmp.path / "whole.db").string());
  ingest(whole, trial, "t");
  // weights 3, biases 3, gradients 6, losses 1, default 8 (the fixture's file)
  EXPECT_EQ(scalar(db, "SELECT count(*) FROM collections"), 21);
  EXPECT_EQ(scalar(db, "SELECT count(*) FROM collections WHERE collection = 'default'"), 8);
  EXPECT_EQ(dump_views(db), dump_views(whole));
}

namespace {

// How many of the catalog's two indexes (tensor_by_name, collection_member_by_tensor) exist.
int64_t catalog_indexes(Database& db) {
  return scalar(db,
                "SELECT count(*) FROM sqlite_schema WHERE type = 'index' AND name IN ('tensor_by_name', "
                "'collection_member_by_tensor')");
}

std::string catalog_index_stats(Database& db) {
  std::string out;
  Statement q(db.handle(),
              "SELECT idx, stat FROM sqlite_stat1 WHERE idx IN ('tensor_by_name', 'collection_member_by_tensor') "
              "ORDER BY idx");
  while (q.step()) out += q.text(0) + "=" + q.text(1) + ";";
  return out;
}

std::string query_plan(Database& db, const std::string& sql) {
  std::string plan;
  Statement q(db.handle(), "EXPLAIN QUERY PLAN " + sql);
  while (q.step()) plan += q.text(3) + "\n";
  return plan;
}

// The indexes present after each file an ingest of `trial` writes (inside its transaction).
std::vector<int64_t> indexes_while_writing(Database& db, const fs::path& trial, const std::string& name) {
  std::vector<int64_t> seen;
  LocalSource src(trial.string());
  IngestOptions o;
  o.name = name;
  o.progress = [&](size_t, size_t) { seen.push_back(catalog_indexes(db)); };
  Ingester ing(db, src, o);
  ing.run_once();
  return seen;
}

}  // namespace

// The first transaction into an empty tensor table leaves tensor_by_name out while its tensors
// go in, and the memberships (collection_member_by_tensor with them) wait for its end: both
// indexes are built before it commits, with their planner statistics, and used afterwards. A
// trial added to a database that has tensors keeps them up row by row.
TEST(Ingester, CatalogIndexesOfAnEmptyDatabaseAreBuiltBeforeTheCommit) {
  TempDir tmp;
  Database db((tmp.path / "t.db").string());
  const std::string stats = catalog_index_stats(db);
  ASSERT_NE(stats, "");
  const std::vector<int64_t> first = indexes_while_writing(db, kFixtures / "pt_bad_init", "bad");
  ASSERT_FALSE(first.empty());
  EXPECT_EQ(first.front(), 1);  // tensor_by_name left out; collection_member_by_tensor not yet dropped
  EXPECT_EQ(catalog_indexes(db), 2);
  EXPECT_EQ(catalog_index_stats(db), stats);
  EXPECT_EQ(scalar(db, "SELECT count(*) FROM pragma_integrity_check WHERE integrity_check <> 'ok'"), 0);
  EXPECT_NE(query_plan(db, "SELECT tensor_id FROM tensor WHERE name = 'Net_fc.bias'").find("tensor_by_name"),
            std::string::npos);
  EXPECT_NE(query_plan(db, "SELECT collection_id FROM collection_member WHERE tensor_id = 3")
                .find("collection_member_by_tensor"),
            std::string::npos);
  EXPECT_EQ(scalar(db, "SELECT count(*) FROM tensor INDEXED BY tensor_by_name WHERE name = 'Net_fc.bias'"), 1);
  EXPECT_EQ(scalar(db,
                   "SELECT count(*) FROM collection_member INDEXED BY collection_member_by_tensor "
                   "WHERE tensor_id = (SELECT tensor_id FROM tensor WHERE name = 'Net_fc.bias')"),
            scalar(db, "SELECT count(*) FROM collections WHERE tensor = 'Net_fc.bias'"));
  for (int64_t n : indexes_while_writing(db, kFixtures / "pt_good_init", "good")) EXPECT_EQ(n, 2);
  Database apart((tmp.path / "apart.db").string());
  ingest(apart, kFixtures / "pt_good_init", "good");
  EXPECT_EQ(scalar(db, "SELECT count(*) FROM collections WHERE trial = 'good'"),
            scalar(apart, "SELECT count(*) FROM collections"));
}

// A trial still training: the second half of its index files (in name order: its later steps)
// and its end marker moved to `hidden` until restore().
struct HiddenHalf {
  HiddenHalf(fs::path trial_dir, fs::path hidden_dir) : trial(std::move(trial_dir)), hidden(std::move(hidden_dir)) {
    fs::create_directories(hidden);
    fs::rename(trial / kEndMarkerFile, hidden / kEndMarkerFile);
    for (auto& e : fs::recursive_directory_iterator(trial / "index"))
      if (e.is_regular_file()) index_files.push_back(e.path());
    std::sort(index_files.begin(), index_files.end());
    for (size_t i = index_files.size() / 2; i < index_files.size(); ++i)
      fs::rename(index_files[i], hidden / index_files[i].filename());
  }
  void restore() const {
    for (size_t i = index_files.size() / 2; i < index_files.size(); ++i)
      fs::rename(hidden / index_files[i].filename(), index_files[i]);
    fs::rename(hidden / kEndMarkerFile, trial / kEndMarkerFile);
  }
  static constexpr const char* kEndMarkerFile = "training_job_end.ts";
  fs::path trial, hidden;
  std::vector<fs::path> index_files;  // all of them, sorted
};

// A followed trial's passes (one Ingester, run_once again) parse the collections files again
// only when something changed: a definition edited behind the ingest is taken up as the files
// say it, and so is a tensor name a file gains; the trial ends equal to an ingest of it whole.
TEST(Ingester, FollowedPassesTakeUpChangedCollections) {
  TempDir tmp;
  fs::path trial = copy_fixture("pt_bad_init", tmp.path);
  const HiddenHalf half(trial, tmp.path / "hidden");

  Database db((tmp.path / "follow.db").string());
  LocalSource src(trial.string());
  Ingester ing(db, src, IngestOptions{});
  ing.run_once();
  const std::string weights = "SELECT definition FROM collection WHERE name = 'weights'";
  const std::string defined = text(db, weights);
  ing.run_once();  // nothing changed
  EXPECT_EQ(text(db, weights), defined);

  db.exec("UPDATE collection SET definition = '{\"include_regex\":[],\"tensor_names\":[]}' WHERE name = 'weights'");
  ing.run_once();
  EXPECT_EQ(text(db, weights), defined);

  const fs::path file = trial / "collections" / "000000000" / "worker_0_collections.json";
  std::string json = file_bytes(file);
  const std::string listed = R"("tensor_names": ["Net_conv0.weight",)";
  ASSERT_NE(json.find(listed), std::string::npos);
  json.replace(json.find(listed), listed.size(), R"("tensor_names": ["Net_fc.bias", "Net_conv0.weight",)");
  std::ofstream(file, std::ios::binary | std::ios::trunc) << json;
  half.restore();
  ing.run_once();
  EXPECT_EQ(scalar(db, "SELECT count(*) FROM collections WHERE collection = 'weights' AND tensor = 'Net_fc.bias'"), 1);

  Database whole((tmp.path / "whole.db").string());
  ingest(whole, trial);
  EXPECT_EQ(dump_views(db), dump_views(whole));
}

TEST(Ingester, GrowingTrialGainsExactlyItsNewSteps) {
  TempDir tmp;
  fs::path trial = copy_fixture("pt_bad_init", tmp.path);
  const HiddenHalf half(trial, tmp.path / "hidden");
  const std::vector<fs::path>& idx = half.index_files;

  Database db((tmp.path / "grow.db").string());
  IngestStats a = ingest(db, trial);
  EXPECT_FALSE(a.ended);
  EXPECT_EQ(a.files_ingested, idx.size() / 2);
  int64_t complete_before = scalar(db, "SELECT count(*) FROM steps WHERE complete");
  EXPECT_EQ(complete_before, static_cast<int64_t>(idx.size() / 2));  // one worker: each step completes

  half.restore();
  IngestStats b = ingest(db, trial);
  EXPECT_TRUE(b.ended);
  EXPECT_EQ(b.files_ingested, idx.size() - idx.size() / 2);

  Database ref((tmp.path / "ref.db").string());
  ingest(ref, trial);
  EXPECT_EQ(dump_views(db), dump_views(ref));
}

TEST(Ingester, StepCompletesOnlyWhenEveryWorkerWroteIt) {
  TempDir tmp;
  fs::path trial = copy_fixture("dist2", tmp.path);
  fs::remove(trial / "training_job_end.ts");
  fs::path late = trial / "index/000000000/000000000008_worker_1.json";
  fs::path saved = tmp.path / "late.json";
  fs::rename(late, saved);
  Database db((tmp.path / "t.db").string());
  ingest(db, trial);
  EXPECT_EQ(scalar(db, "SELECT complete FROM steps WHERE step = 8"), 0);
  EXPECT_EQ(scalar(db, "SELECT count(*) FROM steps WHERE complete"), 4);
  // worker_0's rows of step 8 are stored but not visible until the step completes.
  EXPECT_EQ(scalar(db, "SELECT count(*) FROM tensor_values WHERE step = 8"), 0);
  EXPECT_GT(scalar(db, "SELECT count(*) FROM value WHERE tensor_step + step_offset = 8"), 0);
  fs::rename(saved, late);
  ingest(db, trial);
  EXPECT_EQ(scalar(db, "SELECT complete FROM steps WHERE step = 8"), 1);
  EXPECT_GT(scalar(db, "SELECT count(*) FROM tensor_values WHERE step = 8 AND worker = 'worker_1'"), 0);
}

// A worker's file that lands after later steps completed (its step complete already, as a
// later one is) is read by the next pass of a follower, which otherwise lists only what follows
// the last complete step's files.
TEST(Ingester, AWorkersFileLandingAfterLaterStepsCompletedIsReadByTheNextPass) {
  TempDir tmp;
  fs::path trial = copy_fixture("dist2", tmp.path);
  fs::remove(trial / "training_job_end.ts");
  fs::path late = trial / "index/000000000/000000000004_worker_1.json";
  fs::rename(late, tmp.path / "late.json");
  Database db((tmp.path / "t.db").string());
  LocalSource src(trial.string());
  Ingester follower(db, src, IngestOptions{});
  follower.run_once();
  follower.run_once();
  EXPECT_EQ(scalar(db, "SELECT complete FROM steps WHERE step = 4"), 1);
  EXPECT_EQ(scalar(db, "SELECT count(*) FROM tensor_values WHERE step = 4 AND worker = 'worker_1'"), 0);
  fs::rename(tmp.path / "late.json", late);
  follower.run_once();
  EXPECT_GT(scalar(db, "SELECT count(*) FROM tensor_values WHERE step = 4 AND worker = 'worker_1'"), 0);
  std::ofstream(trial / "training_job_end.ts") << "1";
  follower.run_once();
  Database ref((tmp.path / "ref.db").string());
  ingest(ref, trial);
  EXPECT_EQ(dump_views(db), dump_views(ref));
}

// A whole step that lands after later ones (one worker: nothing says it is missing) is read by
// the next run, and by the pass that sees training end.
TEST(Ingester, AStepLandingAfterLaterStepsIsReadByTheNextRun) {
  TempDir tmp;
  fs::path trial = copy_fixture("pt_bad_init", tmp.path);
  fs::remove(trial / "training_job_end.ts");
  const fs::path index = trial / "index/000000000/000000000005_worker_0.json";
  fs::rename(index, tmp.path / "late.json");
  Database db((tmp.path / "t.db").string());
  {
    LocalSource src(trial.string());
    Ingester follower(db, src, IngestOptions{});
    follower.run_once();
    follower.run_once();
  }
  EXPECT_EQ(scalar(db, "SELECT count(*) FROM steps WHERE step = 5"), 0);
  fs::rename(tmp.path / "late.json", index);
  ingest(db, trial);
  EXPECT_EQ(scalar(db, "SELECT complete FROM steps WHERE step = 5"), 1);
  EXPECT_GT(scalar(db, "SELECT count(*) FROM tensor_values WHERE step = 5"), 0);
  Database ref((tmp.path / "ref.db").string());
  ingest(ref, trial);
  EXPECT_EQ(dump_views(db), dump_views(ref));
}

// Complete steps are a prefix (docs/FORMAT.md: a step is complete once a later one is), kept as
// the trial's complete_through; what the value views show and what steps.complete says agree
// with it at every point: while a worker lags, once it caught up, and once training ended.
TEST(Ingester, CompleteThroughMarksWhatTheViewsShow) {
  TempDir tmp;
  fs::path trial = copy_fixture("dist2", tmp.path);
  fs::remove(trial / "training_job_end.ts");
  fs::path late = trial / "index/000000000/000000000008_worker_1.json";
  fs::rename(late, tmp.path / "late.json");
  Database db((tmp.path / "t.db").string());
  auto agree = [&](int64_t through) {
    EXPECT_EQ(scalar(db, "SELECT complete_through FROM trial"), through);
    EXPECT_EQ(scalar(db, "SELECT count(*) FROM step WHERE complete <> (step <= " + std::to_string(through) + ")"), 0);
    EXPECT_EQ(scalar(db, "SELECT count(*) FROM tensor_values WHERE step > " + std::to_string(through)), 0);
    EXPECT_EQ(scalar(db, "SELECT count(*) FROM reductions WHERE step > " + std::to_string(through)), 0);
    EXPECT_EQ(scalar(db, "SELECT count(DISTINCT step) FROM tensor_values"),
              scalar(db, "SELECT count(*) FROM steps WHERE complete"));
  };
  ingest(db, trial);
  agree(6);
  EXPECT_GT(scalar(db, "SELECT count(*) FROM value WHERE tensor_step + step_offset = 8"), 0);  // stored, not yet shown
  fs::rename(tmp.path / "late.json", late);
  ingest(db, trial);
  agree(8);
  std::ofstream(trial / "training_job_end.ts") << "1";
  ingest(db, trial);
  agree(std::numeric_limits<int64_t>::max());
  EXPECT_EQ(scalar(db, "SELECT count(*) FROM steps WHERE complete"), 5);
}

// A GLOBAL-mode step is numbered by its mode step in the value views (core_dtypes: global step
// 16 is GLOBAL step 5), and a filter on that number is a search of value, never a scan.
TEST(Ingester, GlobalModeStepIsFoundByItsModeStepWithoutAScan) {
  TempDir tmp;
  fs::path trial = copy_fixture("core_dtypes", tmp.path);
  Database db((tmp.path / "t.db").string());
  ingest(db, trial);
  EXPECT_EQ(text(db, "SELECT mode || ' ' || mode_step FROM steps WHERE step = 16"), "GLOBAL 5");
  EXPECT_GT(scalar(db, "SELECT count(*) FROM tensor_values WHERE step = 5 AND mode = 'GLOBAL'"), 0);
  EXPECT_EQ(scalar(db, "SELECT count(*) FROM tensor_values WHERE step = 16"), 0);
  EXPECT_EQ(scalar(db,
                   "SELECT count(*) FROM reductions WHERE tensor = 'dtype/float32' AND step = 5 "
                   "AND reduction = 'max' AND abs = 0"),
            1);
  for (const char* sql : {"SELECT value FROM reductions WHERE tensor = 'dtype/float32' AND step = 5",
                          "SELECT value FROM reductions WHERE step = 5",
                          "SELECT value FROM tensor_values WHERE tensor = 'dtype/float32' AND step = 5",
                          "SELECT value FROM tensor_values WHERE step = 5"}) {
    Statement q(db.handle(), std::string("EXPLAIN QUERY PLAN ") + sql);
    std::string plan;
    while (q.step()) plan += q.text(3) + "\n";
    EXPECT_EQ(plan.find("SCAN v"), std::string::npos) << sql << "\n" << plan;
  }
}

TEST(Ingester, UnfinishedFilesWaitWhileLiveAndAreErrorsOnceEnded) {
  TempDir tmp;
  fs::path trial = copy_fixture("pt_reductions", tmp.path);
  fs::remove(trial / "training_job_end.ts");
  // The last step's event file is cut in the middle of a record; the index is already there.
  fs::path ev;
  for (auto& e : fs::recursive_directory_iterator(trial / "events"))
    if (e.is_regular_file() && (ev.empty() || e.path() > ev)) ev = e.path();
  auto full = fs::file_size(ev);
  fs::resize_file(ev, full / 2);
  Database db((tmp.path / "t.db").string());
  IngestStats live = ingest(db, trial);
  EXPECT_TRUE(live.errors.empty());
  EXPECT_EQ(live.files_waiting, 1u);
  EXPECT_EQ(scalar(db, "SELECT count(*) FROM ingest_errors"), 0);
  // Ended with the file still cut: reported, naming the file and step; the rest is intact.
  std::ofstream(trial / "training_job_end.ts") << "1";
  IngestStats ended = ingest(db, trial);
  ASSERT_FALSE(ended.errors.empty());
  EXPECT_EQ(ended.errors[0].step(), 26);
  EXPECT_NE(ended.errors[0].cause().find("past the end"), std::string::npos) << ended.errors[0].cause();
  EXPECT_EQ(scalar(db, "SELECT count(*) FROM ingest_errors WHERE step = 26"),
            static_cast<int64_t>(ended.errors.size()));
  EXPECT_EQ(scalar(db, "SELECT count(*) FROM steps WHERE complete"), 16);
}

TEST(Ingester, FlippedByteIsReportedAndTheRestIngested) {
  TempDir tmp;
  fs::path trial = copy_fixture("pt_bad_init", tmp.path);
  fs::path ev = trial / "events/000000000005/000000000005_worker_0.tfevents";
  {
    // Flip a byte of the second record's length field (the first record is file_version).
    std::fstream f(ev, std::ios::in | std::ios::out | std::ios::binary);
    char head[8];
    f.read(head, 8);
    uint64_t first_len;
    std::memcpy(&first_len, head, 8);
    std::streamoff at = static_cast<std::streamoff>(first_len + 16 + 2);
    f.seekg(at);
    char c;
    f.get(c);
    f.seekp(at);
    f.put(static_cast<char>(c ^ 0x40));
  }
  Database db((tmp.path / "t.db").string());
  IngestStats s = ingest(db, trial);
  ASSERT_EQ(s.errors.size(), 1u);
  EXPECT_EQ(s.errors[0].step(), 5);
  EXPECT_NE(s.errors[0].cause().find("CRC"), std::string::npos);
  EXPECT_NE(s.errors[0].cause().find("000000000005_worker_0.tfevents"), std::string::npos);
  EXPECT_EQ(text(db, "SELECT file FROM ingest_errors"), "index/000000000/000000000005_worker_0.json");
  EXPECT_EQ(scalar(db, "SELECT count(*) FROM steps WHERE complete"), 24);
  // Only the damaged tensor is missing from step 5.
  Database ref((tmp.path / "ref.db").string());
  ingest(ref, kFixtures / "pt_bad_init");
  EXPECT_EQ(scalar(db, "SELECT count(*) FROM tensor_values WHERE step = 5") + 1,
            scalar(ref, "SELECT count(*) FROM tensor_values WHERE step = 5"));
  EXPECT_EQ(scalar(db, "SELECT count(*) FROM tensor_values WHERE step <> 5"),
            scalar(ref, "SELECT count(*) FROM tensor_values WHERE step <> 5"));
}

TEST(Ingester, IndexPointingOutsideTheTrialIsRefused) {
  TempDir tmp;
  fs::path trial = copy_fixture("dist2", tmp.path);
  fs::path idx = trial / "index/000000000/000000000004_worker_0.json";
  std::string json = file_bytes(idx);
  auto at = json.find("events/");
  json.replace(at, 7, "../../../");
  std::ofstream(idx) << json;
  Database db((tmp.path / "t.db").string());
  IngestStats s = ingest(db, trial);
  ASSERT_EQ(s.errors.size(), 1u);
  EXPECT_NE(s.errors[0].cause().find("outside the trial"), std::string::npos);
  EXPECT_EQ(scalar(db,
                   "SELECT count(*) FROM value WHERE tensor_step + step_offset = 4 AND worker_id = (SELECT worker_id "
                   "FROM worker WHERE name = 'worker_0')"),
            0);
  EXPECT_GT(scalar(db, "SELECT count(*) FROM tensor_values WHERE step = 4 AND worker = 'worker_1'"), 0);
}

TEST(Ingester, SeveralTrialsInOneDatabase) {
  TempDir tmp;
  Database db((tmp.path / "t.db").string());
  ingest(db, kFixtures / "pt_bad_init");
  ingest(db, kFixtures / "pt_good_init");
  ingest(db, kFixtures / "pt_good_init", "good_again");
  EXPECT_EQ(text(db, "SELECT group_concat(trial, ',') FROM (SELECT trial FROM trials ORDER BY trial)"),
            "good_again,pt_bad_init,pt_good_init");
  EXPECT_EQ(scalar(db, "SELECT count(*) FROM tensor_values WHERE trial = 'good_again'"),
            scalar(db, "SELECT count(*) FROM tensor_values WHERE trial = 'pt_good_init'"));
  // The same name from another folder is refused, naming both.
  LocalSource other((kFixtures / "dist2").string());
  IngestOptions o;
  o.name = "pt_bad_init";
  EXPECT_THROW(Ingester(db, other, o), Error);
}

// One-element values of shape [1] (or 0-d) go 32 at a time through a statement of their own
// whose shape, red_src and red_mask are literals. Every kind of them (dtypes, NaN, inf, -0, 0-d
// and [1]; [1,1] stays on the general path) must read back exactly as through the general path,
// which --compress forces (blobs then go apart into value_blob, uncompressed when they do not
// shrink, so the views must be identical).
TEST(Ingester, ScalarBatchesReadBackAsTheGeneralPath) {
  TempDir tmp;
  fs::path trial = tmp.path / "scalars";
  {
    TrialWriter w(trial.string());
    for (int step = 0; step < 2; ++step) {
      auto s = w.begin_step(step, "worker_0", TrialMode::kTrain, step);
      for (int t = 0; t < 80; ++t) {
        const std::string name = "s" + std::to_string(t);
        const float special[] = {std::nanf(""), INFINITY, -INFINITY, -0.0f, 0.0f};
        float f32 = t < 5 ? special[t] : static_cast<float>(step * 100 + t) * -0.5f;
        double f64 = static_cast<double>(t) / 3.0 + step;
        int64_t i64 = (int64_t{1} << 40) * (t % 3) - t;
        uint8_t u8 = static_cast<uint8_t>(t * 7 + step);
        uint16_t f16 = static_cast<uint16_t>(0x3C00 + t);  // float16 bit patterns
        switch (t % 6) {
          case 0: s->add_tensor(name, DType::Float32, {}, &f32, 4); break;
          case 1: s->add_tensor(name, DType::Float32, {1}, &f32, 4); break;
          case 2: s->add_tensor(name, DType::Float64, {1}, &f64, 8); break;
          case 3: s->add_tensor(name, DType::Int64, {}, &i64, 8); break;
          case 4: s->add_tensor(name, t % 4 ? DType::UInt8 : DType::Bool, {1}, &u8, 1); break;
          default:
            s->add_tensor(name, t % 4 ? DType::Float16 : DType::Float32, {1, 1},
                          t % 4 ? static_cast<const void*>(&f16) : &f32, t % 4 ? 2 : 4);
        }
      }
      s->close();
    }
    w.write_end_marker();
  }
  Database plain((tmp.path / "plain.db").string()), general((tmp.path / "general.db").string());
  ingest(plain, trial);
  {
    LocalSource src(trial.string());
    IngestOptions o;
    o.compress = true;
    Ingester(general, src, o).run_once();
  }
  EXPECT_EQ(scalar(plain, "SELECT count(*) FROM value_blob"), 0);  // all inline: the scalar path ran
  EXPECT_EQ(scalar(general, "SELECT count(*) FROM value_blob"), 160);
  EXPECT_EQ(scalar(plain, "SELECT count(*) FROM tensor_values"), 160);
  EXPECT_EQ(dump_views(plain), dump_views(general));
}

// A one-element value's distribution is computed and stored only where the hook saved reductions
// for it (after it in the event file at step 0, before it at step 1): its reductions are then
// columns, and the distributions view reads its value_distribution row. Without them ("b") the
// view derives the distribution from the element.
TEST(Ingester, OneElementValuesKeepTheirDistributionBesideSavedReductions) {
  TempDir tmp;
  fs::path trial = tmp.path / "saved";
  {
    TrialWriter w(trial.string());
    for (int step = 0; step < 2; ++step) {
      auto s = w.begin_step(step, "worker_0", TrialMode::kTrain, step);
      const float a = -2.5f - static_cast<float>(step), b = 4.0f + static_cast<float>(step);
      if (step == 1) s->add_reduction("a", "max", false, 7.0);
      s->add_tensor("a", DType::Float32, {1}, &a, 4);
      if (step == 0) s->add_reduction("a", "max", false, 7.0);
      s->add_tensor("b", DType::Float32, {}, &b, 4);
      s->close();
    }
    w.write_end_marker();
  }
  Database db((tmp.path / "t.db").string());
  ingest(db, trial);
  EXPECT_EQ(text(db,
                 "SELECT group_concat(name || '@' || tensor_step || ':' || negative || ',' || p0 || ',' || p100, ' ') "
                 "FROM (SELECT tn.name, v.tensor_step, d.* FROM value v JOIN tensor tn USING (tensor_id) "
                 "JOIN value_distribution d USING (distribution_id) ORDER BY tn.name, v.tensor_step)"),
            "a@0:1,-2.5,-2.5 a@1:1,-3.5,-3.5");
  EXPECT_EQ(text(db,
                 "SELECT group_concat(tensor || '@' || step || ':' || count || ',' || p50, ' ') "
                 "FROM (SELECT * FROM distributions ORDER BY tensor, step)"),
            "a@0:1,-2.5 a@1:1,-3.5 b@0:1,4.0 b@1:1,5.0");
  EXPECT_EQ(text(db,
                 "SELECT group_concat(r_max, ' ') FROM (SELECT r_max FROM value v JOIN tensor tn USING (tensor_id) "
                 "WHERE tn.name = 'a' ORDER BY v.tensor_step)"),
            "7.0 7.0");  // the hook's
}

// Files with many values are written 32 rows per INSERT (OR IGNORE, row count checked); a file
// whose (step, worker) is already stored takes the row-by-row path, which reports each value it
// skips. Both must store every value exactly once.
TEST(Ingester, BatchedValuesAreExactAndAStoredStepIsReportedNotDuplicated) {
  TempDir tmp;
  fs::path trial = tmp.path / "batched";
  constexpr int kScalars = 70;  // two full batches and a remainder
  {
    TrialWriter w(trial.string());
    for (int step = 0; step < 3; ++step) {
      auto s = w.begin_step(step, "worker_0", TrialMode::kTrain, step);
      for (int t = 0; t < kScalars; ++t) {
        float x = static_cast<float>(step * 1000 + t) + 0.25f;
        s->add_tensor("scalar_" + std::to_string(t), DType::Float32, {}, &x, 4);
      }
      std::vector<float> big(4096);  // a blob stored apart, in value_blob
      for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<float>(step) - static_cast<float>(i);
      s->add_tensor("big", DType::Float32, {64, 64}, big.data(), big.size() * 4);
      s->close();
    }
    w.write_end_marker();
  }
  Database db((tmp.path / "t.db").string());
  IngestStats st = ingest(db, trial);
  EXPECT_TRUE(st.errors.empty());
  EXPECT_EQ(st.values, 3u * (kScalars + 1));
  EXPECT_EQ(scalar(db, "SELECT count(*) FROM tensor_values"), 3 * (kScalars + 1));
  for (int step = 0; step < 3; ++step)
    for (int t : {0, 31, 32, 63, 64, 69}) {
      std::string where = " FROM reductions WHERE tensor = 'scalar_" + std::to_string(t) +
                          "' AND step = " + std::to_string(step) + " AND reduction = 'max' AND abs = 0";
      EXPECT_EQ(text(db, "SELECT printf('%.2f', value)" + where), std::to_string(step * 1000 + t) + ".25");
    }
  EXPECT_EQ(text(db,
                 "SELECT printf('%.1f', value) FROM reductions WHERE tensor = 'big' AND step = 2 "
                 "AND reduction = 'max' AND abs = 0"),
            "2.0");
  EXPECT_EQ(scalar(db, "SELECT count(*) FROM value_blob"), 3);
  EXPECT_EQ(scalar(db, "SELECT count(DISTINCT value_id) FROM value WHERE value_id IS NOT NULL"), 3);
  EXPECT_EQ(scalar(db, "SELECT min(length(value)) FROM tensor_values WHERE tensor = 'big'"),
            static_cast<int64_t>(kBlobHeaderFixed + 2 * 8 + 4096 * 4));
  const std::string before = dump_views(db);

  // The last step's index file offered again, as a second index file for a stored (step, worker)
  // would be (listing resumes after the last ingested path).
  {
    Statement del(db.handle(), "DELETE FROM ingested_file WHERE path LIKE '%000000000002_worker_0.json'");
    del.run();
  }
  st = ingest(db, trial);
  EXPECT_EQ(st.values, 0u);
  EXPECT_EQ(st.errors.size(), static_cast<size_t>(kScalars + 1));
  for (const auto& e : st.errors) EXPECT_NE(e.cause().find("was already stored"), std::string::npos) << e.cause();
  EXPECT_EQ(dump_views(db), before);
  EXPECT_EQ(scalar(db, "SELECT count(*) FROM value_blob"), 3);
}

// A one-shot ingest (bulk_load) writes through a rollback journal when it has the database to
// itself, and stores exactly what an ingest through the WAL stores; with a reader connected it
// stays in WAL mode. Either way the database is in WAL mode after the pass.
TEST(Ingester, BulkLoadStoresWhatTheWalStoresAndYieldsToReaders) {
  TempDir tmp;
  auto run = [&](Database& db, bool bulk) {
    LocalSource src((kFixtures / "pt_bad_init").string());
    IngestOptions o;
    o.bulk_load = bulk;
    std::set<std::string> modes;  // the journal mode after each commit that completed steps
    o.on_steps_completed = [&](int64_t) { modes.insert(text(db, "PRAGMA journal_mode")); };
    Ingester ing(db, src, o);
    IngestStats s = ing.run_once();
    EXPECT_GT(s.files_ingested, 0u);
    EXPECT_EQ(text(db, "PRAGMA journal_mode"), "wal");
    return modes;
  };
  Database wal((tmp.path / "wal.db").string());
  EXPECT_EQ(run(wal, false), std::set<std::string>{"wal"});
  Database bulk((tmp.path / "bulk.db").string());
  EXPECT_EQ(run(bulk, true), std::set<std::string>{"truncate"});
  EXPECT_EQ(dump_views(bulk), dump_views(wal));
  EXPECT_EQ(text(bulk, "PRAGMA integrity_check"), "ok");

  Database shared((tmp.path / "shared.db").string());
  sqlite3* reader = nullptr;
  ASSERT_EQ(sqlite3_open((tmp.path / "shared.db").c_str(), &reader), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(reader, "SELECT count(*) FROM steps", nullptr, nullptr, nullptr), SQLITE_OK);
  EXPECT_EQ(run(shared, true), std::set<std::string>{"wal"});
  sqlite3_close(reader);
  EXPECT_EQ(dump_views(shared), dump_views(wal));
}

// Large tensors' blobs are built in place in the event file's bytes (encode_entry), which
// overwrites the record's bytes before the tensor. They must equal the copied blobs (the
// --compress path copies, and random floats do not shrink), and an index that points a second
// entry at one record must still decode the record for the entry it belongs to (in place is off
// for such a file, or the second decode would find the first's header over its record and fail its
// CRC) and report the other, whose name is not the record's tag. Each step's span (2.4 MB) is
// mapped (MappedRange), privately: the event files themselves must come out unchanged.
TEST(Ingester, BlobsBuiltInPlaceEqualCopiesAndSharedRecordsStillDecode) {
  TempDir tmp;
  fs::path trial = tmp.path / "big";
  std::mt19937 rng(7);  // random bits: zlib cannot shrink them, so --compress stores copies
  {
    TrialWriter w(trial.string());
    for (int step = 0; step < 3; ++step) {
      auto s = w.begin_step(step, "worker_0", TrialMode::kTrain, step);
      for (const char* name : {"w", "b"}) {
        std::vector<uint32_t> x(300000);
        for (uint32_t& u : x) u = static_cast<uint32_t>(rng());
        s->add_tensor(name, DType::Float32, {300, 1000}, x.data(), x.size() * 4);
      }
      s->close();
    }
    w.write_end_marker();
  }
  auto run = [&](const std::string& db_name, bool compress) {
    auto db = std::make_unique<Database>((tmp.path / db_name).string());
    LocalSource src(trial.string());
    IngestOptions o;
    o.compress = compress;
    o.threads = 1;
    IngestStats s = Ingester(*db, src, o).run_once();
    EXPECT_TRUE(s.errors.empty()) << (s.errors.empty() ? "" : s.errors[0].cause());
    return db;
  };
  auto event_bytes = [&] {
    std::string all;
    for (auto& e : fs::recursive_directory_iterator(trial / "events")) {
      if (e.is_regular_file()) all += e.path().string() + file_bytes(e.path());
    }
    return all;
  };
  const std::string events_before = event_bytes();
  auto in_place = run("in_place.db", false);
  auto copied = run("copied.db", true);
  EXPECT_TRUE(event_bytes() == events_before) << "an event file was written to";
  EXPECT_EQ(scalar(*in_place, "SELECT count(*) FROM tensor_values WHERE length(value) > 1200000"), 6);
  EXPECT_TRUE(dump_views(*in_place) == dump_views(*copied)) << "in-place blobs differ from copies";

  // Step 3: "alias" points at w's record.
  {
    TrialWriter w(trial.string());
    auto s = w.begin_step(3, "worker_0", TrialMode::kTrain, 3);
    std::vector<float> x(300000, 0.25f);
    s->add_tensor("w", DType::Float32, {300, 1000}, x.data(), x.size() * 4);
    s->add_tensor("b", DType::Float32, {300, 1000}, x.data(), x.size() * 4);
    s->close();
  }
  fs::path idx = trial / "index/000000000/000000000003_worker_0.json";
  std::string json = file_bytes(idx);
  auto first = json.find("{\"tensorname\": \"w\"");
  ASSERT_NE(first, std::string::npos) << json;
  std::string entry = json.substr(first, json.find('}', first) + 1 - first);
  std::string alias = entry;
  alias.replace(alias.find("\"w\""), 3, "\"alias\"");
  json.insert(json.find(entry) + entry.size(), ", " + alias);
  std::ofstream(idx) << json;
  LocalSource src(trial.string());
  IngestOptions o;
  o.threads = 1;
  IngestStats s = Ingester(*in_place, src, o).run_once();
  ASSERT_EQ(s.errors.size(), 1u);
  EXPECT_NE(s.errors[0].cause().find("the record holds tensor 'w'"), std::string::npos) << s.errors[0].cause();
  EXPECT_EQ(s.errors[0].step(), 3);
  EXPECT_EQ(scalar(*in_place, "SELECT count(*) FROM tensor_values WHERE tensor = 'alias'"), 0);
  EXPECT_EQ(scalar(*in_place,
                   "SELECT count(*) FROM tensor_values WHERE tensor = 'w' AND step = 3 AND length(value) > 1200000"),
            1);
  EXPECT_EQ(scalar(*in_place,
                   "SELECT count(*) FROM tensor_values WHERE tensor = 'b' AND step = 3 AND length(value) > 1200000"),
            1);
}

// A file's values are found by name (prepare_file's table): hundreds of distinct names each stored
// once with its own value, and a name the index lists twice reported once, its first record kept.
TEST(Ingester, EveryNameOfAFileIsItsOwnValueAndANameListedTwiceIsReported) {
  TempDir tmp;
  fs::path trial = tmp.path / "names";
  constexpr int kTensors = 300;
  {
    TrialWriter w(trial.string());
    auto s = w.begin_step(0, "worker_0", TrialMode::kTrain, 0);
    for (int i = 0; i < kTensors; ++i) {
      const float x = static_cast<float>(i);
      s->add_tensor("t" + std::to_string(i), DType::Float32, {}, &x, sizeof x);
    }
    s->close();
    w.write_end_marker();
  }
  fs::path idx = trial / "index/000000000/000000000000_worker_0.json";
  std::string json = file_bytes(idx);
  // t7's entry listed again after t8's: the second listing is the error.
  auto t7 = json.find("{\"tensorname\": \"t7\"");
  auto t8 = json.find("{\"tensorname\": \"t8\"");
  ASSERT_NE(t7, std::string::npos) << json;
  ASSERT_NE(t8, std::string::npos) << json;
  json.insert(json.find('}', t8) + 1, ", " + json.substr(t7, json.find('}', t7) + 1 - t7));
  std::ofstream(idx) << json;

  Database db((tmp.path / "names.db").string());
  IngestStats s = ingest(db, trial);
  ASSERT_EQ(s.errors.size(), 1u);
  EXPECT_NE(s.errors[0].cause().find("tensor 't7' appears twice in the index"), std::string::npos)
      << s.errors[0].cause();
  EXPECT_EQ(scalar(db, "SELECT count(*) FROM tensor_values"), kTensors);
  EXPECT_EQ(scalar(db, "SELECT count(DISTINCT tensor) FROM tensor_values"), kTensors);
  // Each value is its own name's: t<i> holds i.
  EXPECT_EQ(scalar(db,
                   "SELECT count(*) FROM reductions WHERE reduction = 'max' AND abs = 0 AND "
                   "value = CAST(substr(tensor, 2) AS REAL)"),
            kTensors);
}

// A step's event file still being written while a later step completes: the later step makes the
// listing of the next pass start after it, yet the file left waiting is read once it is whole
// (waiting_file), by this process or the next.
TEST(Ingester, AFileLeftWaitingBehindACompleteStepIsIngestedOnceWhole) {
  TempDir tmp;
  fs::path trial = tmp.path / "live";
  {
    TrialWriter w(trial.string());
    for (int step = 0; step < 3; ++step) {
      auto s = w.begin_step(step, "worker_0", TrialMode::kTrain, step);
      std::vector<float> x(1000, static_cast<float>(step));
      s->add_tensor("w", DType::Float32, {1000}, x.data(), x.size() * 4);
      s->close();
    }
  }
  const fs::path partial = trial / "events/000000000001/000000000001_worker_0.tfevents";
  const std::string whole = file_bytes(partial);
  fs::resize_file(partial, 100);
  Database db((tmp.path / "t.db").string());
  LocalSource src(trial.string());
  {
    IngestStats s = Ingester(db, src, {}).run_once();
    EXPECT_EQ(s.files_ingested, 2u);
    EXPECT_EQ(s.files_waiting, 1u);
    EXPECT_EQ(scalar(db, "SELECT count(*) FROM steps WHERE complete"), 2);
  }
  {
    IngestStats s = Ingester(db, src, {}).run_once();  // still partial: still waiting
    EXPECT_EQ(s.files_waiting, 1u);
  }
  std::ofstream(partial, std::ios::binary) << whole;
  IngestStats s = Ingester(db, src, {}).run_once();
  EXPECT_EQ(s.files_ingested, 1u);
  EXPECT_EQ(s.files_waiting, 0u);
  EXPECT_TRUE(s.errors.empty()) << (s.errors.empty() ? "" : s.errors[0].cause());
  EXPECT_EQ(scalar(db, "SELECT count(*) FROM tensor_values WHERE tensor = 'w'"), 3);
  EXPECT_EQ(scalar(db, "SELECT count(*) FROM waiting_file"), 0);
}

// Truncates one event file right after it is mapped, as another process might during an ingest.
class TruncatingSource : public LocalSource {
 public:
  TruncatingSource(const std::string& root, std::string victim, uint64_t keep)
      : LocalSource(root), victim_(std::move(victim)), keep_(keep) {}
  Status map_range(const std::string& path, uint64_t offset, uint64_t length,
                   std::unique_ptr<MappedRange>* out) override {
    Status st = LocalSource::map_range(path, offset, length, out);
    if (*out && path == victim_ && !truncated) {
      fs::resize_file(root() + "/" + path, keep_);
      truncated = true;
    }
    return st;
  }
  bool truncated = false;

 private:
  std::string victim_;
  uint64_t keep_;
};

// A mapped event file that shrinks mid-ingest (mapped_range.h) is neither a crash (SIGBUS) nor
// zeros stored as values: the file waits, and once whole again it is ingested as if nothing happened.
TEST(Ingester, AnEventFileTruncatedWhileMappedWaitsAndIsReadAgain) {
  TempDir tmp;
  fs::path trial = tmp.path / "big";
  std::mt19937 rng(11);
  {
    TrialWriter w(trial.string());
    for (int step = 0; step < 3; ++step) {
      auto s = w.begin_step(step, "worker_0", TrialMode::kTrain, step);
      for (const char* name : {"w", "b"}) {
        std::vector<float> x(300000);
        for (float& f : x) f = static_cast<float>(rng() % 1000) / 100.0f;
        s->add_tensor(name, DType::Float32, {300, 1000}, x.data(), x.size() * 4);
      }
      s->close();
    }
    w.write_end_marker();
  }
  const std::string victim = "events/000000000001/000000000001_worker_0.tfevents";
  const std::string original = file_bytes(trial / victim);
  ASSERT_GT(original.size(), 2'400'000u);  // mapped (ingester.cc, kMapSpanBytes)
  IngestOptions o;
  o.threads = 1;
  Database db((tmp.path / "t.db").string());
  {
    TruncatingSource src(trial.string(), victim, original.size() / 2);
    IngestStats s = Ingester(db, src, o).run_once();
    ASSERT_TRUE(src.truncated);
    EXPECT_EQ(s.files_waiting, 1u);
    EXPECT_EQ(s.files_ingested, 2u);
    EXPECT_TRUE(s.errors.empty()) << (s.errors.empty() ? "" : s.errors[0].cause());
    EXPECT_EQ(scalar(db, "SELECT count(*) FROM tensor_values WHERE step = 1"), 0);
    EXPECT_EQ(scalar(db, "SELECT count(*) FROM tensor_values"), 4);
  }
  std::ofstream(trial / victim, std::ios::binary) << original;
  LocalSource src(trial.string());
  IngestStats s = Ingester(db, src, o).run_once();
  EXPECT_EQ(s.files_ingested, 1u);
  EXPECT_TRUE(s.errors.empty()) << (s.errors.empty() ? "" : s.errors[0].cause());
  Database clean((tmp.path / "clean.db").string());
  Ingester(clean, src, o).run_once();
  EXPECT_EQ(scalar(db, "SELECT count(*) FROM tensor_values"), 6);
  EXPECT_TRUE(dump_views(db) == dump_views(clean)) << "the re-read file differs from a clean ingest";
}

// A bulk load commits once per GiB of events (ingester.cc, kBulkCommitBytes), where a load
// through the WAL commits once past 64 MiB: three 40 MiB steps are two commits in WAL mode and
// one in a bulk load, which then completes all three steps at once.
TEST(Ingester, BulkLoadCommitsLessOften) {
  TempDir tmp;
  fs::path trial = tmp.path / "big";
  {
    TrialWriter w(trial.string());
    std::vector<float> x(10'000'000, 0.5f);
    for (int step = 0; step < 3; ++step) {
      auto s = w.begin_step(step, "worker_0", TrialMode::kTrain, step);
      s->add_tensor("w", DType::Float32, {10'000, 1'000}, x.data(), x.size() * 4);
      s->close();
    }
    w.write_end_marker();
  }
  auto commits = [&](bool bulk) {
    Database db((tmp.path / (bulk ? "bulk.db" : "wal.db")).string());
    LocalSource src(trial.string());
    IngestOptions o;
    o.bulk_load = bulk;
    std::vector<int64_t> completed;  // steps completed by each commit
    o.on_steps_completed = [&](int64_t n) { completed.push_back(n); };
    IngestStats s = Ingester(db, src, o).run_once();
    EXPECT_EQ(s.files_ingested, 3u);
    EXPECT_EQ(scalar(db, "SELECT count(*) FROM tensor_values"), 3);
    return completed;
  };
  EXPECT_EQ(commits(false), (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(commits(true), (std::vector<int64_t>{3}));
}
