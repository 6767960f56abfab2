// The tensors' summary the ingest keeps (tensor_summary_writer.h) through every way a value or a
// step becomes visible: steps completing while a worker lags, a worker's late file into a visible
// step, a whole step landing after later ones, a wider selection, --values none then all, and
// rm and rename beside it. After every run, `info --tensors` read from the summary equals the
// aggregate over the public views, and the stored summary equals the one built again from the
// values (what the upgrade of an older database builds).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "ingest/pipeline/ingester.h"
#include "ingest/pipeline/selection.h"
#include "ingest/source/local_source.h"
#include "ingest/source/mapped_range.h"
#include "ingest/writer/trial_writer.h"
#include "schema/database.h"
#include "schema/trial_edit.h"
#include "tests/common/sql_int64.h"
#include "tests/common/tensor_listing.h"
#include "tests/common/temp_dir.h"

using namespace trialdb;
using trialdb::test::listing_from_summary;
using trialdb::test::listing_from_views;
using trialdb::test::rebuilt_summary;
using trialdb::test::stored_summary;
using trialdb::test::TempDir;
namespace fs = std::filesystem;

static const bool kSigbusHandlerInstalled = (MappedRange::install_sigbus_handler(), true);

namespace {

const fs::path kFixtures = TRIALDB_FIXTURES;
const std::string kW0 = "worker_0", kW1 = "worker_1";
constexpr int64_t kSteps = 7;           // 0..5 TRAIN, 6 GLOBAL
constexpr int64_t kGlobalStep = 6;      // a GLOBAL-mode step: its values are numbered by its mode step,
constexpr int64_t kGlobalModeStep = 2;  // which is also a TRAIN step's number

// A two-worker job written whole into master/, landing in job/ one (step, worker) file pair at
// a time. Its tensors, per step and worker:
//   a  float32 [2], both workers, every step;
//   b  worker_0 only: float32 [2] before step 3, float32 [3] at 3, float64 [3] from 4 on;
//   c  worker_1 only, at even steps;
//   d  a saved shape only (no raw value), both workers;
//   e  a saved reduction only (no raw value, no shape), worker_0 at steps 1 and 5;
//   t  at step 0 only: [3] from worker_0, [2] from worker_1 (two shapes first seen at one step).
class Job {
 public:
  explicit Job(const fs::path& dir) : master_(dir / "master"), job_(dir / "job") {
    TrialWriter w(master_.string());
    CollectionSpec all;
    all.name = "all";
    all.include_regex = {".*"};
    for (const std::string& worker : {kW0, kW1}) w.write_collections(worker, 2, {all});
    for (int64_t step = 0; step < kSteps; ++step)
      for (const std::string& worker : {kW0, kW1}) {
        const bool global = step == kGlobalStep;
        auto s = w.begin_step(step, worker, global ? TrialMode::kGlobal : TrialMode::kTrain,
                              global ? kGlobalModeStep : step);
        const float f[3] = {static_cast<float>(step), 1, 2};
        const double d[3] = {static_cast<double>(step), 1, 2};
        s->add_tensor("a", DType::Float32, {2}, f, 8);
        if (worker == kW0 && step < 3) s->add_tensor("b", DType::Float32, {2}, f, 8);
        if (worker == kW0 && step == 3) s->add_tensor("b", DType::Float32, {3}, f, 12);
        if (worker == kW0 && step > 3) s->add_tensor("b", DType::Float64, {3}, d, 24);
        if (worker == kW1 && step % 2 == 0) s->add_tensor("c", DType::Float32, {1}, f, 4);
        s->add_shape("d", {4, 4});
        if (worker == kW0 && (step == 1 || step == 5)) s->add_reduction("e", "mean", false, 0.5);
        if (step == 0) s->add_tensor("t", DType::Float32, {worker == kW0 ? 3 : 2}, f, worker == kW0 ? 12 : 8);
        units_[{step, worker}] = {s->event_path(), s->index_path()};
        s->close();
      }
    for (const auto& e : fs::recursive_directory_iterator(master_ / "collections"))
      if (e.is_regular_file()) copy(fs::relative(e.path(), master_).string());
  }
  const fs::path& path() const { return job_; }

  void land(int64_t step, const std::string& worker) {
    for (const std::string& rel : units_.at({step, worker})) copy(rel);  // the event file, then its index
  }
  void land_steps(int64_t from, int64_t to, const std::string& worker) {
    for (int64_t step = from; step < to; ++step) land(step, worker);
  }
  void end() { std::ofstream(job_ / "training_job_end.ts") << ""; }

 private:
  void copy(const std::string& rel) {
    fs::create_directories((job_ / rel).parent_path());
    fs::copy_file(master_ / rel, job_ / rel, fs::copy_options::overwrite_existing);
  }
  fs::path master_, job_;
  std::map<std::pair<int64_t, std::string>, std::vector<std::string>> units_;
};

IngestStats ingest(Database& db, const fs::path& trial, IngestOptions o = {}) {
  if (o.name.empty()) o.name = "job";
  LocalSource src(trial.string());
  Ingester ing(db, src, o);
  return ing.run_once();
}

IngestOptions selecting(const std::string& steps, const std::string& tensors) {
  IngestOptions o;
  if (!steps.empty()) {
    EXPECT_TRUE(parse_step_range(steps, &o.selection).is_ok()) << steps;
  }
  o.selection.tensor_regex = tensors;
  return o;
}

int64_t visible_steps(Database& db, const std::string& tensor, const std::string& trial = "job") {
  Statement q(
      db.handle(),
      "SELECT tn.visible_steps FROM tensor tn JOIN trial t USING (trial_id) WHERE t.name = ?1 AND tn.name = ?2");
  q.bind(1, trial).bind(2, tensor);
  return q.step() ? q.int64(0) : -1;
}

// The summary says what the views say, and is what building it again from the values gives.
void expect_exact(Database& db, const std::string& when) {
  SCOPED_TRACE(when);
  EXPECT_EQ(listing_from_summary(db.handle()), listing_from_views(db.handle()));
  EXPECT_EQ(stored_summary(db.handle()), rebuilt_summary(db));
}

}  // namespace

TEST(TensorSummary, StepsBecomingVisibleCountOnceWhateverTheirWorkers) {
  TempDir tmp;
  Job job(tmp.path);
  Database db((tmp.path / "t.db").string());
  job.land_steps(0, kSteps, kW0);
  job.land_steps(0, 3, kW1);
  ingest(db, job.path());  // worker_1 lags: steps 3.. hold worker_0's values, not visible yet
  expect_exact(db, "worker_1 at step 3");
  EXPECT_EQ(visible_steps(db, "a"), 3);
  EXPECT_EQ(visible_steps(db, "b"), 3);
  job.land_steps(3, 5, kW1);
  ingest(db, job.path());
  expect_exact(db, "worker_1 at step 5");
  EXPECT_EQ(visible_steps(db, "a"), 5);
  EXPECT_EQ(visible_steps(db, "e"), 1);
  job.land_steps(5, kSteps, kW1);
  job.end();
  ingest(db, job.path());
  expect_exact(db, "ended");
  EXPECT_EQ(visible_steps(db, "a"), kSteps);
  EXPECT_EQ(visible_steps(db, "c"), 4);
}

TEST(TensorSummary, AWorkersLateFileAddsOnlyTheStepsNoOtherWorkerSaved) {
  TempDir tmp;
  Job job(tmp.path);
  Database db((tmp.path / "t.db").string());
  job.land_steps(0, kSteps, kW0);
  for (int64_t step = 0; step < kSteps; ++step)
    if (step != 2) job.land(step, kW1);
  ingest(db, job.path());  // step 2 is complete (later steps are) with worker_0's values alone
  expect_exact(db, "worker_1's step 2 missing");
  EXPECT_EQ(visible_steps(db, "a"), kSteps);
  EXPECT_EQ(visible_steps(db, "c"), 3);
  job.land(2, kW1);
  ingest(db, job.path());
  expect_exact(db, "worker_1's step 2 landed");
  EXPECT_EQ(visible_steps(db, "a"), kSteps);  // worker_0's value was there: no new step
  EXPECT_EQ(visible_steps(db, "c"), 4);       // worker_1's alone: a new step
}

// Steps 0 and 3 land after the others, read by later passes of one ingester (those that see
// training end list all of index/): their values go into visible steps, and the variants it first
// stored at step 1 (b's [2] float32) move to step 0.
TEST(TensorSummary, StepsLandingAfterLaterOnesAreCountedWhenStored) {
  TempDir tmp;
  Job job(tmp.path);
  Database db((tmp.path / "t.db").string());
  for (const std::string& worker : {kW0, kW1})
    for (int64_t step = 0; step < kSteps; ++step)
      if (step != 0 && step != 3) job.land(step, worker);
  LocalSource src(job.path().string());
  IngestOptions o;
  o.name = "job";
  Ingester follower(db, src, o);  // one ingester over several passes, as --follow
  follower.run_once();
  expect_exact(db, "steps 0 and 3 missing");
  EXPECT_EQ(visible_steps(db, "a"), kSteps - 2);
  job.land(0, kW0);
  job.land(0, kW1);
  job.land(3, kW0);
  job.end();
  follower.run_once();
  expect_exact(db, "step 0 and worker_0's step 3 landed");
  EXPECT_EQ(visible_steps(db, "a"), kSteps);
  EXPECT_EQ(visible_steps(db, "t"), 1);
  job.land(3, kW1);
  follower.run_once();
  expect_exact(db, "step 3 landed");
  EXPECT_EQ(visible_steps(db, "a"), kSteps);
  EXPECT_EQ(visible_steps(db, "c"), 4);
}

TEST(TensorSummary, AWiderSelectionAddsItsValuesToVisibleSteps) {
  TempDir tmp;
  Job job(tmp.path);
  for (const std::string& worker : {kW0, kW1}) job.land_steps(0, kSteps, worker);
  job.end();
  Database db((tmp.path / "t.db").string());
  ingest(db, job.path(), selecting("2:5", "^a$"));
  expect_exact(db, "--steps 2:5 --tensors ^a$");
  EXPECT_EQ(visible_steps(db, "a"), 3);
  ingest(db, job.path(), selecting("", "^b$"));  // b's values before step 2 lower its first steps
  expect_exact(db, "--tensors ^b$");
  ingest(db, job.path(), selecting("4:", ""));
  expect_exact(db, "--steps 4:");
  ingest(db, job.path());
  expect_exact(db, "no selection");
  Database whole((tmp.path / "whole.db").string());
  ingest(whole, job.path());
  EXPECT_EQ(listing_from_summary(db.handle()), listing_from_summary(whole.handle()));
}

TEST(TensorSummary, ValuesNoneThenAllChangeNothingOfIt) {
  TempDir tmp;
  Job job(tmp.path);
  for (const std::string& worker : {kW0, kW1}) job.land_steps(0, kSteps, worker);
  job.end();
  Database db((tmp.path / "t.db").string());
  IngestOptions none;
  none.store_values = false;
  ingest(db, job.path(), none);
  expect_exact(db, "--values none");
  const std::vector<std::string> before = stored_summary(db.handle());
  IngestOptions all;
  all.add_missing_values = true;
  IngestStats s = ingest(db, job.path(), all);
  EXPECT_GT(s.values_added, 0u);
  expect_exact(db, "--values all");
  EXPECT_EQ(stored_summary(db.handle()), before);
}

TEST(TensorSummary, RemoveAndRenameLeaveTheOtherTrialsExact) {
  TempDir tmp;
  Job job(tmp.path);
  job.land_steps(0, kSteps, kW0);
  job.land_steps(0, 3, kW1);
  Database db((tmp.path / "t.db").string());
  ingest(db, job.path());
  IngestOptions dist2;
  dist2.name = "dist2";
  ingest(db, kFixtures / "dist2", dist2);
  expect_exact(db, "two trials");
  remove_trial(db, "job");
  expect_exact(db, "job removed");
  EXPECT_EQ(trialdb::test::sql_int64(db.handle(),
                                     "SELECT count(*) FROM tensor_variant WHERE trial_id NOT IN "
                                     "(SELECT trial_id FROM trial)"),
            0);
  rename_trial(db, "dist2", "renamed");
  expect_exact(db, "dist2 renamed");
  const std::vector<std::string> listing = listing_from_summary(db.handle());
  ASSERT_FALSE(listing.empty());
  EXPECT_EQ(listing[0].rfind("renamed|", 0), 0u) << listing[0];
}

TEST(TensorSummary, FixturesOfOtherModesAndWorkersAreExact) {
  TempDir tmp;
  Database db((tmp.path / "t.db").string());
  for (const char* fixture : {"core_dtypes", "dist2", "pt_reductions"}) {
    IngestOptions o;
    o.name = fixture;
    ingest(db, kFixtures / fixture, o);
  }
  expect_exact(db, "core_dtypes, dist2, pt_reductions");
}

// More tensors than one statement writes (the variants and the memberships go 64 a statement,
// the rest one by one): new variants, then the same variants lowered to a step that lands after
// later ones completed; every tensor is a member of the collection that matches them all.
TEST(TensorSummary, ManyTensorsAreWrittenInBatchesExactly) {
  constexpr int kTensors = 150;
  constexpr int64_t kManySteps = 3;
  TempDir tmp;
  const fs::path master = tmp.path / "master", job = tmp.path / "job";
  std::vector<std::vector<std::string>> files(kManySteps);  // by step: event file, index file
  {
    TrialWriter w(master.string());
    CollectionSpec all;
    all.name = "all";
    all.include_regex = {".*"};
    w.write_collections(kW0, 1, {all});
    for (int64_t step = 0; step < kManySteps; ++step) {
      auto s = w.begin_step(step, kW0, TrialMode::kTrain, step);
      const float f[2] = {static_cast<float>(step), 1};
      for (int t = 0; t < kTensors; ++t)  // two shapes: a variant each
        s->add_tensor("t" + std::to_string(t), DType::Float32, {t % 2 + 1}, f, (t % 2 + 1) * sizeof(float));
      files[step] = {s->event_path(), s->index_path()};
      s->close();
    }
  }
  const auto land = [&](const std::string& rel) {
    fs::create_directories((job / rel).parent_path());
    fs::copy_file(master / rel, job / rel);
  };
  for (const auto& e : fs::recursive_directory_iterator(master / "collections"))
    if (e.is_regular_file()) land(fs::relative(e.path(), master).string());
  for (int64_t step = 1; step < kManySteps; ++step)
    for (const auto& rel : files[step]) land(rel);
  Database db((tmp.path / "t.db").string());
  ingest(db, job);
  expect_exact(db, "steps 1 and 2");
  EXPECT_EQ(visible_steps(db, "t149"), 2);
  EXPECT_EQ(
      trialdb::test::sql_int64(db.handle(), "SELECT count(DISTINCT tensor) FROM collections WHERE collection = 'all'"),
      kTensors);
  for (const auto& rel : files[0]) land(rel);
  std::ofstream(job / "training_job_end.ts") << "";
  ingest(db, job);
  expect_exact(db, "step 0 late");
  EXPECT_EQ(visible_steps(db, "t149"), 3);
  EXPECT_EQ(trialdb::test::sql_int64(db.handle(), "SELECT count(*) FROM tensor_variant WHERE first_step = 0"),
            kTensors);
}
