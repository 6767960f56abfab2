// Rules: the findings of every bundled fixture equal its findings.json (docs/RULES.md), evaluated in
// one go and step by step while the trial grows; re-runs add nothing; --param, --rule-file,
// --exit-code, --on-finding and stalled_training. (The rule_* SQL functions are tested with
// sqlext's: tests/sqlext/rule_functions_test.cc.)
//
// Fixture databases are made by the built CLI (`trialdb ingest`), as a user would.
#include <gtest/gtest.h>

#include <algorithm>
#include <sqlite3.h>
#include <sys/wait.h>

#include <cmath>
#include <cstdlib>
#include <limits>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <cstdio>
#include <random>
#include <vector>

#include "ingest/writer/trial_writer.h"
#include "rules_sql/rule_runner.h"
#include "schema/database.h"
#include "tests/common/temp_dir.h"
#include "tests/rules_sql/rules_cli.h"

namespace fs = std::filesystem;
using trialdb::Database;
using trialdb::DType;
using trialdb::Statement;
using trialdb::TrialMode;
using trialdb::TrialWriter;

using trialdb::test::TempDir;

namespace {

using namespace trialdb::test::rules_cli;

// ---------------------------------------------------------------------------------------------
// Every fixture, all rules with default parameters (zoo: zoo.params).

class FixtureFindings : public ::testing::TestWithParam<std::string> {};

TEST_P(FixtureFindings, EqualGoldenFindingsAndRerunAddsNothing) {
  const std::string name = GetParam();
  TempDir tmp;
  std::string db = tmp / "t.db";
  ingest(kFixtures + "/" + name, db, name, tmp);
  std::string args = name == "zoo" ? zoo_params() : "";
  RunResult first = rules(db, args + " --exit-code --json", tmp);
  Findings want = golden(name + ".findings.json");
  size_t n_want = 0;
  for (auto& [r, s] : want) n_want += s.size();
  ASSERT_EQ(first.status, n_want ? 3 : 0) << first.err;
  EXPECT_EQ(nlohmann::json::parse(first.out).size(), n_want);
  Findings got = recorded(db, name);
  EXPECT_EQ(got, want) << diff(got, want);

  // Re-running evaluates nothing new and records nothing.
  int64_t before = count_findings(db);
  RunResult again = rules(db, args + " --exit-code --json", tmp);
  EXPECT_EQ(again.status, 0) << again.err;
  EXPECT_EQ(nlohmann::json::parse(again.out).size(), 0u);
  EXPECT_EQ(count_findings(db), before);
}

// Ingests fixture `name` into db_path; its complete steps, in order.
std::vector<int64_t> ingest_fixture(const std::string& name, const std::string& db_path, const TempDir& tmp) {
  ingest(kFixtures + "/" + name, db_path, name, tmp);
  std::vector<int64_t> steps;
  Database db(db_path, trialdb::OpenMode::kExisting);
  Statement q(db.handle(), "SELECT step FROM steps WHERE complete ORDER BY step");
  while (q.step()) steps.push_back(q.int64(0));
  return steps;
}

// Evaluated in random batches of steps (the runner's last_step moved forward at random cut
// points, as a growing trial or a crash between batches would split it), every fixture gives
// its golden findings: state carried between batches is exact.
TEST_P(FixtureFindings, RandomSplitsGiveTheSameFindings) {
  const std::string name = GetParam();
  TempDir tmp;
  const std::string db_path = tmp / "t.db";
  const std::vector<int64_t> steps = ingest_fixture(name, db_path, tmp);
  ASSERT_FALSE(steps.empty());
  std::vector<std::string> params;
  if (name == "zoo") {
    std::ifstream in(kFixtures + "/zoo.params");
    for (std::string line; std::getline(in, line);)
      if (!line.empty()) params.push_back(line);
  }
  std::mt19937 rng(static_cast<unsigned>(std::hash<std::string>{}(name)));
  for (int split = 0; split < 3; ++split) {
    std::remove((db_path + "-wal").c_str());
    const std::string copy = tmp / ("split" + std::to_string(split) + ".db");
    fs::copy_file(db_path, copy, fs::copy_options::overwrite_existing);
    Database db(copy, trialdb::OpenMode::kExisting);
    trialdb::rules::RuleOptions opt;
    opt.params = params;
    opt.clock = [] { return 0.0; };
    trialdb::rules::RuleRunner runner(db, opt);
    for (size_t i = 0; i < steps.size();) {
      i += 1 + rng() % std::max<size_t>(1, steps.size() / 3);
      runner.set_last_step(i < steps.size() ? std::optional<int64_t>(steps[i - 1]) : std::nullopt);
      runner.evaluate_new_steps();
      EXPECT_TRUE(runner.failures().empty());
    }
    const Findings want = golden(name + ".findings.json");
    Findings got = recorded(copy, name);
    got.erase("stalled_training");
    EXPECT_EQ(got, want) << "split " << split << ":\n" << diff(got, want);
  }
}

// Parameters under which the rules that carry state between batches find something on the
// fixtures only when that state is carried exactly: counters that must reach 2 (overfit,
// overtraining), checks spaced over steps (loss_not_decreasing), windows (unchanged_tensor),
// running totals (class_imbalance, check_input_images), the first steps (poor_weight_initialization).
const std::vector<std::string> kStatefulParams = {"overfit.patience=2",
                                                  "overfit.ratio_threshold=-1",
                                                  "overtraining.patience_train=2",
                                                  "overtraining.patience_validation=2",
                                                  "overtraining.delta=0",
                                                  "loss_not_decreasing.num_steps=3",
                                                  "loss_not_decreasing.diff_percent=200",
                                                  "unchanged_tensor.tensor_regex=.*",
                                                  "unchanged_tensor.num_steps=4",
                                                  "unchanged_tensor.atol=1",
                                                  "class_imbalance.samples=50",
                                                  "class_imbalance.threshold_imbalance=1",
                                                  "check_input_images.threshold_samples=20",
                                                  "check_input_images.threshold_mean=0",
                                                  "poor_weight_initialization.steps=7",
                                                  "poor_weight_initialization.patience=1",
                                                  "weight_update_ratio.large_threshold=0"};

// Every finding (rule, step, tensor, worker, message) of `trial` in the database, but the clock's.
std::set<std::vector<std::string>> findings_with_messages(const std::string& db_path) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open_v2(db_path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  std::set<std::vector<std::string>> out;
  {
    Statement q(db, "SELECT rule, step, tensor, worker, message FROM rule_findings WHERE rule <> 'stalled_training'");
    while (q.step()) out.insert({q.text(0), std::to_string(q.int64(1)), q.text(2), q.text(3), q.text(4)});
  }
  sqlite3_close(db);
  return out;
}

// With kStatefulParams, the findings (and their messages) are the same whether the trial's steps
// are evaluated in one batch, one step per batch, or in random batches.
TEST_P(FixtureFindings, OneBatchStepByStepAndRandomSplitsAgree) {
  const std::string name = GetParam();
  TempDir tmp;
  const std::string db_path = tmp / "t.db";
  const std::vector<int64_t> steps = ingest_fixture(name, db_path, tmp);
  std::remove((db_path + "-wal").c_str());
  // Evaluates a copy of the database in batches ending at the given cut points (indexes into
  // steps; the last batch runs to the end).
  auto evaluate = [&](const std::string& label, const std::vector<size_t>& cuts) {
    const std::string copy = tmp / (label + ".db");
    fs::copy_file(db_path, copy, fs::copy_options::overwrite_existing);
    {
      Database db(copy, trialdb::OpenMode::kExisting);
      trialdb::rules::RuleOptions opt;
      opt.params = kStatefulParams;
      opt.clock = [] { return 0.0; };
      trialdb::rules::RuleRunner runner(db, opt);
      for (size_t cut : cuts) {
        runner.set_last_step(steps[cut]);
        runner.evaluate_new_steps();
      }
      runner.set_last_step(std::nullopt);
      runner.evaluate_new_steps();
      EXPECT_TRUE(runner.failures().empty()) << label;
    }
    return findings_with_messages(copy);
  };
  const auto one_batch = evaluate("one_batch", {});
  std::vector<size_t> every(steps.size());
  for (size_t i = 0; i < steps.size(); ++i) every[i] = i;
  EXPECT_EQ(evaluate("step_by_step", every), one_batch);
  std::mt19937 rng(static_cast<unsigned>(std::hash<std::string>{}(name)) + 1);
  for (int split = 0; split < 2; ++split) {
    std::vector<size_t> cuts;
    for (size_t i = rng() % 3; i < steps.size(); i += 1 + rng() % 4) cuts.push_back(i);
    EXPECT_EQ(evaluate("split" + std::to_string(split), cuts), one_batch) << "split " << split;
  }
  if (name == "zoo") {  // the parameters make the stateful rules find something here
    std::set<std::string> rules;
    for (const auto& f : one_batch) rules.insert(f[0]);
    for (const char* rule : {"overfit", "overtraining", "loss_not_decreasing", "unchanged_tensor", "class_imbalance",
                             "check_input_images", "poor_weight_initialization", "weight_update_ratio"})
      EXPECT_TRUE(rules.count(rule)) << rule;
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, FixtureFindings,
                         ::testing::Values("core_dtypes", "dist2", "pt_bad_init", "pt_good_init", "pt_reductions",
                                           "zoo"));

TEST(RulesCli, SimilarAcrossRunsAgainstGoodInit) {
  TempDir tmp;
  std::string db = tmp / "t.db";
  ingest(kFixtures + "/pt_bad_init", db, "pt_bad_init", tmp);
  ingest(kFixtures + "/pt_good_init", db, "pt_good_init", tmp);
  RunResult r = rules(db, "--trial pt_bad_init --param similar_across_runs.other_trial=pt_good_init", tmp);
  ASSERT_EQ(r.status, 0) << r.err;
  Findings got = recorded(db, "pt_bad_init"), want = golden("pt_bad_init.vs_good.findings.json");
  EXPECT_EQ(got, want) << diff(got, want);
  EXPECT_TRUE(recorded(db, "pt_good_init").empty());  // --trial: the other trial was not evaluated
}

// The rules evaluated while the trial grows, a few steps per ingest, yield the same findings
// as evaluated at the end: state carries across runs, and each step is evaluated once.
TEST(RulesCli, StepByStepWhileTheTrialGrowsEqualsGolden) {
  TempDir tmp;
  const fs::path src = kFixtures + "/zoo", live = tmp.path / "zoo";
  fs::create_directories(live);
  fs::copy(src / "collections", live / "collections", fs::copy_options::recursive);
  std::map<int64_t, std::vector<fs::path>> files;  // step -> its event and index files
  for (auto& e : fs::recursive_directory_iterator(src)) {
    if (!e.is_regular_file()) continue;
    std::string top = fs::relative(e.path(), src).begin()->string();
    if (top != "events" && top != "index") continue;
    files[std::stoll(e.path().filename().string().substr(0, 12))].push_back(fs::relative(e.path(), src));
  }
  ASSERT_EQ(files.size(), 40u);
  std::string db = tmp / "t.db", params = zoo_params();
  size_t printed = 0, batch = 0;
  auto it = files.begin();
  while (it != files.end()) {
    for (size_t i = 0; i < 7 && it != files.end(); ++i, ++it)
      for (const auto& rel : it->second) {
        fs::create_directories((live / rel).parent_path());
        fs::copy_file(src / rel, live / rel);
      }
    ingest(live.string(), db, "zoo", tmp);
    RunResult r = rules(db, params + " --json", tmp);
    ASSERT_EQ(r.status, 0) << r.err;
    printed += nlohmann::json::parse(r.out).size();
    ++batch;
  }
  EXPECT_EQ(batch, 6u);
  Findings got = recorded(db, "zoo"), want = golden("zoo.findings.json");
  EXPECT_EQ(got, want) << diff(got, want);
  size_t total = 0;
  for (auto& [r, s] : got) total += s.size();
  EXPECT_EQ(printed, total);  // each finding printed once, when it was new
}

// Steps that change after the rules evaluated them give the findings of one evaluation of the
// trial as it is: each batch holds back one step, which lands with the next batch (after later
// steps completed), and the first batch is ingested with a selection that a later ingest widens
// (values added to steps already evaluated). Rules that fold history (loss_not_decreasing,
// overfit, ...) see the steps in order, so the findings equal zoo's golden ones.
TEST(RulesCli, StepsLandingLateOrWidenedEqualGolden) {
  TempDir tmp;
  const fs::path src = kFixtures + "/zoo", live = tmp.path / "zoo";
  fs::create_directories(live);
  fs::copy(src / "collections", live / "collections", fs::copy_options::recursive);
  std::map<int64_t, std::vector<fs::path>> files;  // step -> its event and index files
  for (auto& e : fs::recursive_directory_iterator(src)) {
    if (!e.is_regular_file()) continue;
    std::string top = fs::relative(e.path(), src).begin()->string();
    if (top != "events" && top != "index") continue;
    files[std::stoll(e.path().filename().string().substr(0, 12))].push_back(fs::relative(e.path(), src));
  }
  std::vector<int64_t> order;  // 0..39 with each 7th step moved after the next 7
  for (auto& [step, unused] : files) order.push_back(step);
  for (size_t i = 3; i + 7 < order.size(); i += 7)
    std::rotate(order.begin() + i, order.begin() + i + 1, order.begin() + i + 8);
  std::string db = tmp / "t.db", params = zoo_params();
  for (size_t at = 0; at < order.size(); at += 7) {
    for (size_t i = at; i < at + 7 && i < order.size(); ++i)
      for (const auto& rel : files[order[i]]) {
        fs::create_directories((live / rel).parent_path());
        fs::copy_file(src / rel, live / rel);
      }
    const std::string selection = at == 0 ? " --tensors loss" : "";
    RunResult r =
        sh(quote(kBin) + " ingest " + quote(live.string()) + " --db " + quote(db) + " --name zoo -q" + selection, tmp);
    ASSERT_EQ(r.status, 0) << r.err;
    r = rules(db, params, tmp);
    ASSERT_EQ(r.status, 0) << r.err;
  }
  Findings got = recorded(db, "zoo"), want = golden("zoo.findings.json");
  EXPECT_EQ(got, want) << diff(got, want);
}

TEST(RulesCli, ParamChangesAThresholdAndIsStored) {
  TempDir tmp;
  std::string db = tmp / "t.db";
  ingest(kFixtures + "/pt_bad_init", db, "pt_bad_init", tmp);
  // Every gradient's mean |g| is below 1e3: a finding per gradient tensor and step where it is
  // saved (the 20 TRAIN steps).
  RunResult r = rules(db, "--rule vanishing_gradient --param vanishing_gradient.threshold=1e3", tmp);
  ASSERT_EQ(r.status, 0) << r.err;
  Findings got = recorded(db, "pt_bad_init");
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got["vanishing_gradient"].size(), 6u * 20u);
  sqlite3* h = nullptr;
  sqlite3_open(db.c_str(), &h);
  {
    Statement q(
        h, "SELECT value FROM rule_param WHERE trial IS NULL AND rule = 'vanishing_gradient' AND param = 'threshold'");
    ASSERT_TRUE(q.step());
    EXPECT_EQ(q.text(0), "1e3");
  }
  sqlite3_close(h);

  RunResult bad = rules(db, "--param vanishing_gradient.treshold=1", tmp);
  EXPECT_NE(bad.status, 0);
  EXPECT_NE(bad.err.find("treshold"), std::string::npos) << bad.err;
  EXPECT_NE(bad.err.find("threshold"), std::string::npos) << bad.err;  // names the known ones
  RunResult nonumber = rules(db, "--rule vanishing_gradient --param vanishing_gradient.threshold=abc", tmp);
  EXPECT_NE(nonumber.status, 0);  // refused when given, though no step is left to evaluate
  EXPECT_NE(nonumber.err.find("vanishing_gradient.threshold=abc"), std::string::npos) << nonumber.err;
  RunResult badrule = rules(db, "--rule no_such_rule", tmp);
  EXPECT_NE(badrule.status, 0);
  EXPECT_NE(badrule.err.find("no_such_rule"), std::string::npos) << badrule.err;
  RunResult badtrial = rules(db, "--trial nope", tmp);
  EXPECT_NE(badtrial.status, 0);
  EXPECT_NE(badtrial.err.find("nope"), std::string::npos) << badtrial.err;
}

// tree_depth reads max(v) off the distribution computed at ingest: its p100 is the largest
// non-NaN element, while numpy's max of a value holding a NaN is NaN, which never fires.
TEST(RulesCli, TreeDepthFromTheDistributionNeverFiresOnNaN) {
  TempDir tmp;
  const std::string trial = (tmp.path / "trees").string(), db = tmp / "t.db";
  TrialWriter w(trial);
  w.write_collections("worker_0", 1, {});
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<std::vector<float>> nodes = {{0, 2, 6}, {2, nan, 0}, {0, 100, 3}, {-1, -2}, {}};
  for (size_t step = 0; step < nodes.size(); ++step) {
    auto s = w.begin_step(static_cast<int64_t>(step), "worker_0", TrialMode::kTrain, static_cast<int64_t>(step));
    s->add_tensor("trees/Node", DType::Float32, {static_cast<int64_t>(nodes[step].size())}, nodes[step].data(),
                  4 * nodes[step].size());
    const int32_t ints[2] = {1, 3};
    s->add_tensor("trees/Node_int", DType::Int32, {2}, ints, sizeof ints);
    s->close();
  }
  w.write_end_marker();
  ingest(trial, db, "trees", tmp);
  RunResult r = rules(db, "--rule tree_depth --param tree_depth.tensor_regex=trees/Node", tmp);
  ASSERT_EQ(r.status, 0) << r.err;
  Findings got = recorded(db, "trees");
  const std::set<Key> want = {{0, "trees/Node", "worker_0"},     {0, "trees/Node_int", "worker_0"},
                              {1, "trees/Node_int", "worker_0"}, {2, "trees/Node_int", "worker_0"},
                              {3, "trees/Node_int", "worker_0"}, {4, "trees/Node_int", "worker_0"}};
  EXPECT_EQ(got["tree_depth"], want) << diff(got, {{"tree_depth", want}});
  sqlite3* h = nullptr;
  sqlite3_open(db.c_str(), &h);
  {
    Statement q(h, "SELECT value FROM rule_findings WHERE rule = 'tree_depth' AND step = 0 AND tensor = 'trees/Node'");
    ASSERT_TRUE(q.step());
    EXPECT_EQ(q.real(0), std::log2(6.0));
  }
  sqlite3_close(h);
}

// The rule definitions read raw values. Where the hook saved reductions beside a raw value, the
// reductions view holds the hook's (as smdebug's Trial API answers), which a rule must not take
// for the raw value's.
TEST(RulesCli, HookSavedReductionsBesideRawValuesAreNotTheRulesInput) {
  TempDir tmp;
  const std::string trial = (tmp.path / "hook").string(), db = tmp / "t.db";
  TrialWriter w(trial);
  trialdb::CollectionSpec gradients;
  gradients.name = "gradients";
  gradients.include_regex = {"^gradient/"};
  w.write_collections("worker_0", 1, {gradients});
  const std::vector<float> large(64, 1.0f), tiny(64, 1e-9f);
  for (int step = 0; step < 3; ++step) {
    auto s = w.begin_step(step, "worker_0", TrialMode::kTrain, step);
    // step 0: the raw mean |g| is 1 and the hook says 1e-9 (after the raw value in the file);
    // step 1 the other way round (before it); step 2 the raw value alone, tiny.
    const std::vector<float>& raw = step == 0 ? large : tiny;
    if (step == 1) s->add_reduction("gradient/w", "mean", true, 1.0);
    s->add_tensor("gradient/w", DType::Float32, {64}, raw.data(), 4 * raw.size());
    if (step == 0) s->add_reduction("gradient/w", "mean", true, 1e-9);
    s->close();
  }
  w.write_end_marker();
  ingest(trial, db, "hook", tmp);
  RunResult r = rules(db, "--rule vanishing_gradient", tmp);
  ASSERT_EQ(r.status, 0) << r.err;
  const std::set<Key> want = {{1, "gradient/w", "worker_0"}, {2, "gradient/w", "worker_0"}};
  Findings got = recorded(db, "hook");
  EXPECT_EQ(got["vanishing_gradient"], want) << diff(got, {{"vanishing_gradient", want}});
  sqlite3* h = nullptr;
  sqlite3_open(db.c_str(), &h);
  {
    Statement q(
        h,
        "SELECT step, value FROM reductions WHERE tensor = 'gradient/w' AND reduction = 'mean' AND abs ORDER BY step");
    const std::vector<std::pair<int64_t, double>> rows_want = {
        {0, static_cast<double>(1e-9f)}, {1, 1.0}, {2, static_cast<double>(1e-9f)}};
    std::vector<std::pair<int64_t, double>> rows;
    while (q.step()) rows.emplace_back(q.int64(0), q.real(1));
    EXPECT_EQ(rows, rows_want);  // the hook's at steps 0 and 1
  }
  sqlite3_close(h);
}

// weight_update_ratio divides by ||v_P||, the l2 of the previous raw value, which it reads from
// what the ingest computed: a hook's saved l2 beside the raw value (here 1000 against the raw
// value's 5) is not it.
TEST(RulesCli, WeightUpdateRatioDividesByTheRawValuesNorm) {
  TempDir tmp;
  const std::string trial = (tmp.path / "wur").string(), db = tmp / "t.db";
  TrialWriter w(trial);
  trialdb::CollectionSpec weights;
  weights.name = "weights";
  weights.tensor_names = {"w"};
  w.write_collections("worker_0", 1, {weights});
  const std::vector<std::vector<float>> values = {{3, 4}, {3, 5}, {3, 6}};
  for (int step = 0; step < 3; ++step) {
    auto s = w.begin_step(step, "worker_0", TrialMode::kTrain, step);
    if (step == 0) s->add_reduction("w", "l2", false, 1000.0);  // before the raw value in the file
    s->add_tensor("w", DType::Float32, {2}, values[step].data(), 4 * values[step].size());
    if (step == 1) s->add_reduction("w", "l2", false, 1000.0);  // after it
    s->close();
  }
  w.write_end_marker();
  ingest(trial, db, "wur", tmp);
  RunResult r = rules(db, "--rule weight_update_ratio --param weight_update_ratio.large_threshold=0.1", tmp);
  ASSERT_EQ(r.status, 0) << r.err;
  sqlite3* h = nullptr;
  sqlite3_open(db.c_str(), &h);
  {
    Statement q(h, "SELECT step, value FROM rule_findings WHERE rule = 'weight_update_ratio' ORDER BY step");
    std::vector<std::pair<int64_t, double>> rows;
    while (q.step()) rows.emplace_back(q.int64(0), q.real(1));
    const double eps = 1e-9;
    const std::vector<std::pair<int64_t, double>> want = {{1, 1.0 / (5.0 + eps)}, {2, 1.0 / (std::sqrt(34.0) + eps)}};
    EXPECT_EQ(rows, want);
  }
  sqlite3_close(h);
}

// A pair whose P was evaluated in an earlier run is paired with the state's copy of P, and its
// ratio divides by P's l2 as in one evaluation of the whole trial: the trial arrives in two
// ingests, each followed by a run of the rules, and every ratio is the definition's.
TEST(RulesCli, WeightUpdateRatioPairsAcrossRunsAsInOne) {
  TempDir tmp;
  const std::string trial = (tmp.path / "wur").string(), db = tmp / "t.db";
  TrialWriter w(trial);
  trialdb::CollectionSpec weights;
  weights.name = "weights";
  weights.tensor_names = {"w"};
  w.write_collections("worker_0", 1, {weights});
  const std::vector<std::vector<float>> values = {{3, 4}, {3, 5}, {3, 7}, {6, 7}};
  auto write = [&](int step) {
    auto s = w.begin_step(step, "worker_0", TrialMode::kTrain, step);
    s->add_tensor("w", DType::Float32, {2}, values[step].data(), 4 * values[step].size());
    s->close();
  };
  const std::string args = "--rule weight_update_ratio --param weight_update_ratio.large_threshold=0.1";
  auto evaluated = [&] {
    sqlite3* h = nullptr;
    sqlite3_open(db.c_str(), &h);
    Statement q(h, "SELECT count(*) FROM rule_evaluated WHERE rule = 'weight_update_ratio'");
    q.step();
    const int64_t n = q.int64(0);
    sqlite3_close(h);
    return n;
  };
  write(0);
  write(1);
  ingest(trial, db, "wur", tmp);
  ASSERT_EQ(rules(db, args, tmp).status, 0);
  const int64_t first_run = evaluated();
  write(2);
  write(3);
  w.write_end_marker();
  ingest(trial, db, "wur", tmp);
  ASSERT_EQ(rules(db, args, tmp).status, 0);
  ASSERT_GT(first_run, 0);  // the runs split the steps: a pair spans them
  ASSERT_LT(first_run, 4);
  ASSERT_EQ(evaluated(), 4);
  sqlite3* h = nullptr;
  sqlite3_open(db.c_str(), &h);
  {
    Statement q(h, "SELECT step, value FROM rule_findings WHERE rule = 'weight_update_ratio' ORDER BY step");
    std::vector<std::pair<int64_t, double>> rows;
    while (q.step()) rows.emplace_back(q.int64(0), q.real(1));
    const double eps = 1e-9;
    const std::vector<std::pair<int64_t, double>> want = {
        {1, 1.0 / (5.0 + eps)}, {2, 2.0 / (std::sqrt(34.0) + eps)}, {3, 3.0 / (std::sqrt(58.0) + eps)}};
    EXPECT_EQ(rows, want);
  }
  sqlite3_close(h);
}

// A bad parameter value is an error naming it, not a silent non-finding.
// A database of schema version 7 whose rules an older runner installed holds the stored
// parameters in a table rule_params (and a view rule_param of those in effect): the upgrade to
// version 8 (schema/migrations.h) renames the table and keeps its rows, which the rules then use.
TEST(RulesCli, ParametersStoredInTheOldTableAreKept) {
  TempDir tmp;
  std::string db = tmp / "t.db";
  ingest(kFixtures + "/pt_bad_init", db, "pt_bad_init", tmp);
  ASSERT_EQ(rules(db, "--rule tree_depth", tmp).status, 0);
  sqlite3* h = nullptr;
  sqlite3_open(db.c_str(), &h);
  for (const char* sql : {"DROP VIEW rule_params", "DROP INDEX rule_param_key", "DROP INDEX rule_param_by_name",
                          "PRAGMA legacy_alter_table = ON", "ALTER TABLE rule_param RENAME TO rule_params",
                          "CREATE UNIQUE INDEX rule_params_key ON rule_params(ifnull(trial, ''), rule, param)",
                          "CREATE INDEX rule_params_by_name ON rule_params(rule, param, trial)",
                          "CREATE VIEW rule_param AS SELECT rule, param, value FROM rule_params WHERE trial IS NULL",
                          "INSERT INTO rule_params VALUES ('pt_bad_init', 'vanishing_gradient', 'threshold', '1e3')",
                          "DROP TABLE trial_follower", "UPDATE schema_version SET version = 7"})
    ASSERT_EQ(sqlite3_exec(h, sql, nullptr, nullptr, nullptr), SQLITE_OK) << sql << ": " << sqlite3_errmsg(h);
  sqlite3_close(h);

  RunResult r = rules(db, "--rule vanishing_gradient", tmp);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(recorded(db, "pt_bad_init")["vanishing_gradient"].size(), 6u * 20u);  // threshold 1e3 in effect
  sqlite3_open(db.c_str(), &h);
  {
    Statement q(h,
                "SELECT group_concat(type || ' ' || name, ', ') FROM "
                "(SELECT type, name FROM sqlite_schema WHERE name LIKE 'rule\\_param%' ESCAPE '\\' ORDER BY name)");
    ASSERT_TRUE(q.step());
    EXPECT_EQ(q.text(0),
              "table rule_param, index rule_param_by_name, table rule_param_declared, index rule_param_key, view "
              "rule_params");
    Statement p(h,
                "SELECT value FROM rule_param WHERE trial = 'pt_bad_init' AND rule = 'vanishing_gradient' AND param = "
                "'threshold'");
    ASSERT_TRUE(p.step());
    EXPECT_EQ(p.text(0), "1e3");
  }
  sqlite3_close(h);
}

TEST(RulesCli, NonNumericParameterIsAnError) {
  TempDir tmp;
  std::string db = tmp / "t.db";
  ingest(kFixtures + "/dist2", db, "dist2", tmp);
  RunResult r = rules(db, "--rule vanishing_gradient --param vanishing_gradient.threshold=abc", tmp);
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("'abc' is not a decimal number"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("vanishing_gradient"), std::string::npos) << r.err;
}

// A parameter changed on a trial already evaluated evaluates the rule again from the first step:
// the findings equal those of a fresh database evaluated with that value, and --on-finding runs
// only for findings the old value had not given.
TEST(RulesCli, ChangedParameterReevaluatesLikeAFreshDatabase) {
  TempDir tmp;
  const std::string db = tmp / "t.db", fresh = tmp / "fresh.db", log = tmp / "log.txt";
  ingest(kFixtures + "/pt_bad_init", db, "pt_bad_init", tmp);
  ingest(kFixtures + "/pt_bad_init", fresh, "pt_bad_init", tmp);
  ASSERT_EQ(rules(db, "", tmp).status, 0);
  const Findings before = recorded(db, "pt_bad_init");
  ASSERT_EQ(before.count("vanishing_gradient"), 0u);
  const std::string on_finding =
      " --on-finding " + quote("echo \"$TRIALDB_RULE|$TRIALDB_STEP|$TRIALDB_TENSOR\" >> " + quote(log));
  RunResult r = rules(db, "--param vanishing_gradient.threshold=1e3" + on_finding, tmp);
  ASSERT_EQ(r.status, 0) << r.err;
  ASSERT_EQ(rules(fresh, "--param vanishing_gradient.threshold=1e3", tmp).status, 0);
  const Findings after = recorded(db, "pt_bad_init");
  EXPECT_EQ(after, recorded(fresh, "pt_bad_init")) << diff(after, recorded(fresh, "pt_bad_init"));
  EXPECT_EQ(after.at("vanishing_gradient").size(), 6u * 20u);
  EXPECT_EQ(after.at("overfit"), before.at("overfit"));  // other rules untouched
  auto lines = [&] {
    std::ifstream in(log);
    size_t n = 0;
    for (std::string line; std::getline(in, line);) ++n;
    return n;
  };
  EXPECT_EQ(lines(), 120u);
  // A value that gives the same findings again: evaluated again, nothing new delivered.
  r = rules(db, "--param vanishing_gradient.threshold=1e4" + on_finding, tmp);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(recorded(db, "pt_bad_init"), after);
  EXPECT_EQ(lines(), 120u);
  // Back to the default: the findings of the default again.
  ASSERT_EQ(rules(db, "--param vanishing_gradient.threshold=1e-7", tmp).status, 0);
  EXPECT_EQ(recorded(db, "pt_bad_init"), before);
  // --rerun evaluates again what is asked and nothing else changes.
  ASSERT_EQ(rules(db, "--rerun --rule overfit" + on_finding, tmp).status, 0);
  EXPECT_EQ(recorded(db, "pt_bad_init"), before);
  EXPECT_EQ(lines(), 120u);
}

// --list shows every rule's parameters with type, default and meaning, without a database too;
// with one also the values in effect; it reads only. --summary and --all print what is recorded,
// not only what is new.
TEST(RulesCli, ListSummaryAndAll) {
  TempDir tmp;
  const std::string db = tmp / "t.db";
  ingest(kFixtures + "/pt_bad_init", db, "pt_bad_init", tmp);
  RunResult bare = sh(quote(kBin) + " rules --list --csv", tmp);
  ASSERT_EQ(bare.status, 0) << bare.err;
  EXPECT_NE(bare.out.find("vanishing_gradient,batch,threshold,real,1e-7,"), std::string::npos) << bare.out;
  EXPECT_NE(bare.out.find("stalled_training,clock,threshold,real,1800,"), std::string::npos) << bare.out;
  EXPECT_NE(bare.out.find("similar_across_runs,batch,other_trial,trial,,"), std::string::npos) << bare.out;
  ASSERT_EQ(
      rules(db, "--trial pt_bad_init --rule vanishing_gradient --param vanishing_gradient.threshold=0.5", tmp).status,
      0);
  ASSERT_EQ(rules(db, "--rule dead_relu --param dead_relu.threshold_layer=40", tmp).status, 0);
  const int64_t before = count_findings(db);
  RunResult list = rules(db, "--list --json", tmp);
  ASSERT_EQ(list.status, 0) << list.err;
  std::map<std::string, nlohmann::json> rows;
  for (const auto& row : nlohmann::json::parse(list.out))
    rows[row["rule"].get<std::string>() + "." + row["param"].get<std::string>()] = row;
  EXPECT_EQ(rows.size(), 75u);  // the built-in rules' parameters
  EXPECT_EQ(rows["vanishing_gradient.threshold"]["value"], "1e-7");
  EXPECT_EQ(rows["vanishing_gradient.threshold"]["per_trial"], "pt_bad_init=0.5");
  EXPECT_EQ(rows["dead_relu.threshold_layer"]["value"], "40");
  EXPECT_EQ(rows["dead_relu.threshold_layer"]["default"], "50.0");
  EXPECT_EQ(rows["weight_update_ratio.num_steps"]["type"], "integer|none");
  EXPECT_FALSE(rows["overfit.patience"]["meaning"].get<std::string>().empty());
  EXPECT_EQ(count_findings(db), before);                                                 // --list evaluates nothing
  EXPECT_NE(rules(db, "--list --param vanishing_gradient.threshold=1", tmp).status, 0);  // and stores nothing
  ASSERT_EQ(rules(db, "", tmp).status, 0);
  const int64_t n = count_findings(db);
  ASSERT_GT(n, 0);
  RunResult all = rules(db, "--all --json", tmp);
  ASSERT_EQ(all.status, 0) << all.err;
  EXPECT_EQ(static_cast<int64_t>(nlohmann::json::parse(all.out).size()), n);
  RunResult summary = rules(db, "--summary --json", tmp);
  ASSERT_EQ(summary.status, 0) << summary.err;
  int64_t summed = 0;
  for (const auto& row : nlohmann::json::parse(summary.out)) {
    summed += row["findings"].get<int64_t>();
    EXPECT_LE(row["first_step"].get<int64_t>(), row["last_step"].get<int64_t>());
  }
  EXPECT_EQ(summed, n);
  EXPECT_NE(rules(db, "--all --json --csv", tmp).status, 0);
}

// A custom rule of kind 'batch' that fails on every batch it is given (an unknown reduction).
void write_failing_rule(const std::string& file, const std::string& name) {
  std::ofstream(file) << "-- @rule " << name << " batch\n"
                      << "CREATE VIEW rule_" << name << " AS SELECT trial, step, tensor, worker, "
                      << "tensor_reduce(value, 'nosuch') AS value, 'x' AS message FROM rule_now;\n";
}

// A rule that fails on a trial is reported with the steps of the batch it failed on (all its
// steps: a custom rule is of kind 'batch') and the other rules and trials are evaluated; the run
// exits 1 at the end.
TEST(RulesCli, AFailingRuleDoesNotStopTheOthers) {
  TempDir tmp;
  const std::string db = tmp / "t.db", file = tmp / "broken.sql";
  ingest(kFixtures + "/pt_bad_init", db, "pt_bad_init", tmp);
  ingest(kFixtures + "/pt_good_init", db, "pt_good_init", tmp);
  write_failing_rule(file, "broken");
  RunResult r = rules(db, "--rule-file " + quote(file), tmp);
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.err.find("rule broken on trial pt_bad_init on steps 0..23"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("rule broken on trial pt_good_init on steps 0..23"), std::string::npos) << r.err;
  const Findings want = golden("pt_bad_init.findings.json");
  EXPECT_EQ(recorded(db, "pt_bad_init"), want) << diff(recorded(db, "pt_bad_init"), want);
  EXPECT_EQ(recorded(db, "pt_good_init"), golden("pt_good_init.findings.json"));
}

// Rules that owe the same steps share one fill of rule_batch. A rule that fails rolls back its
// savepoint, and with it a fill made inside it: the rules after it (by name, so "a_broken" goes
// first) must fill the batch again, or they evaluate no step and find nothing.
TEST(RulesCli, AFailingRuleThatFilledTheBatchLeavesTheNextRulesTheirSteps) {
  TempDir tmp;
  const std::string db = tmp / "t.db", file = tmp / "a_broken.sql";
  ingest(kFixtures + "/pt_bad_init", db, "pt_bad_init", tmp);
  write_failing_rule(file, "a_broken");
  RunResult r = rules(db, "--rule-file " + quote(file), tmp);
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.err.find("rule a_broken on trial pt_bad_init on steps 0..23"), std::string::npos) << r.err;
  const Findings want = golden("pt_bad_init.findings.json");
  EXPECT_EQ(recorded(db, "pt_bad_init"), want) << diff(recorded(db, "pt_bad_init"), want);
}

// A selection that matches no tensor is noted once, naming the parameter and the tensor count.
TEST(RulesCli, SelectionMatchingNoTensorIsNotedOnce) {
  TempDir tmp;
  const std::string db = tmp / "t.db";
  ingest(kFixtures + "/pt_bad_init", db, "pt_bad_init", tmp);
  RunResult first = rules(db, "--rule dead_relu --rule exploding_tensor", tmp);
  ASSERT_EQ(first.status, 0) << first.err;
  const std::string note =
      "note: dead_relu on trial pt_bad_init: tensor_regex '.*relu_output' matches none of its 21 tensors";
  EXPECT_NE(first.err.find(note), std::string::npos) << first.err;
  EXPECT_EQ(first.err.find(note), first.err.rfind(note)) << first.err;  // once, not per step
  // It names the closest tensors, and the parameter that selects them.
  EXPECT_NE(first.err.find("; the closest names are 'relu0_output_0', 'relu1_output_0' (select them with "
                           "--param dead_relu.tensor_regex='^relu0_output_0$,^relu1_output_0$')"),
            std::string::npos)
      << first.err;
  EXPECT_EQ(first.err.find("exploding_tensor on"), std::string::npos) << first.err;  // all tensors: nothing to note
  RunResult matching = rules(db, "--rule dead_relu --rerun --param 'dead_relu.tensor_regex=relu\\d_output'", tmp);
  ASSERT_EQ(matching.status, 0) << matching.err;
  EXPECT_EQ(matching.err.find("note:"), std::string::npos) << matching.err;
}

// A selection of tensor_regex and collection_names is noted only when neither selects a tensor: a
// pattern that matches no name beside a collection that has tensors is no note.
TEST(RulesCli, SelectionByCollectionIsNotedOnlyWhenNeitherPartMatches) {
  TempDir tmp;
  const std::string db = tmp / "t.db";
  ingest(kFixtures + "/pt_bad_init", db, "pt_bad_init", tmp);
  RunResult by_collection =
      rules(db, "--rule all_zero --param all_zero.tensor_regex=nosuch --param all_zero.collection_names=weights", tmp);
  ASSERT_EQ(by_collection.status, 0) << by_collection.err;
  EXPECT_EQ(by_collection.err.find("note:"), std::string::npos) << by_collection.err;
  RunResult neither = rules(db, "--rule all_zero --param all_zero.collection_names=nosuch", tmp);
  ASSERT_EQ(neither.status, 0) << neither.err;
  EXPECT_NE(neither.err.find("note: all_zero on trial pt_bad_init: tensor_regex 'nosuch' and collection_names "
                             "'nosuch' match none of its 21 tensors"),
            std::string::npos)
      << neither.err;
}

// The closest names are found by the words they share with the pattern, in any case: a pattern
// in capitals names the tensors written in lower case, and a name sharing half the words or fewer
// is none of them.
TEST(RulesCli, SelectionMatchingNoTensorSuggestsNamesSharingItsWordsInAnyCase) {
  TempDir tmp;
  const std::string db = tmp / "t.db";
  ingest(kFixtures + "/pt_bad_init", db, "pt_bad_init", tmp);
  RunResult r = rules(db, "--rule tree_depth --param 'tree_depth.tensor_regex=NET_convX.WEIGHT'", tmp);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("tensor_regex 'NET_convX.WEIGHT' matches none of its 21 tensors; the closest names are "
                       "'Net_conv0.weight', 'Net_conv1.weight', 'Net_fc.weight', 'gradient/Net_conv0.weight' "),
            std::string::npos)
      << r.err;
  RunResult far = rules(db, "--rule tree_depth --param 'tree_depth.tensor_regex=NET_convX.WEIGHT_grad'", tmp);
  ASSERT_EQ(far.status, 0) << far.err;
  EXPECT_NE(far.err.find("matches none of its 21 tensors\n"), std::string::npos) << far.err;
}

// ingest --rules gives the same notes as `rules` (once, however many passes evaluate the rule),
// and --quiet keeps them to itself.
TEST(RulesCli, IngestWithRulesGivesTheNotes) {
  TempDir tmp;
  const std::string db = tmp / "t.db", quiet_db = tmp / "q.db";
  const std::string args = "--rules --rule dead_relu --rule exploding_tensor";
  RunResult r =
      sh(quote(kBin) + " ingest " + quote(kFixtures + "/pt_bad_init") + " --db " + quote(db) + " " + args, tmp);
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string note =
      "trialdb ingest: note: dead_relu on trial pt_bad_init: tensor_regex '.*relu_output' matches none of its 21 "
      "tensors";
  EXPECT_NE(r.err.find(note), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find(note), r.err.rfind(note)) << r.err;
  RunResult quiet =
      sh(quote(kBin) + " ingest " + quote(kFixtures + "/pt_bad_init") + " --db " + quote(quiet_db) + " --quiet " + args,
         tmp);
  ASSERT_EQ(quiet.status, 0) << quiet.err;
  EXPECT_EQ(quiet.err.find("note:"), std::string::npos) << quiet.err;
}

// A custom rule is the one its file declares, made by the views the file created: a
// commented-out view is nothing, a view made with a comment inside CREATE /* */ VIEW is the rule;
// its typed parameters come from the declaration; loading the file again works.
TEST(RulesCli, CustomRulesAreTheViewsTheFileCreated) {
  TempDir tmp;
  const std::string db = tmp / "t.db", file = tmp / "mine.sql";
  ingest(kFixtures + "/pt_bad_init", db, "pt_bad_init", tmp);
  std::ofstream(file)
      << "-- @rule big_loss batch\n"
         "-- @param threshold real 10 a mean loss above this is a finding\n"
         "-- CREATE VIEW rule_commented_out AS SELECT 1;\n"
         "CREATE /* mine */ VIEW rule_big_loss AS SELECT trial, step, tensor, worker, "
         "tensor_reduce(value, 'mean') AS value, 'loss above 10' AS message "
         "FROM rule_now CROSS JOIN rule_big_loss_cfg AS cfg "
         "WHERE tensor = 'CrossEntropyLoss_output_0' AND tensor_reduce(value, 'mean') > cfg.threshold;\n";
  for (int load = 0; load < 2; ++load) {
    RunResult r = rules(db, "--rule-file " + quote(file) + " --rule big_loss --rerun", tmp);
    ASSERT_EQ(r.status, 0) << r.err;
  }
  const Findings got = recorded(db, "pt_bad_init");
  ASSERT_EQ(got.size(), 1u);
  EXPECT_GT(got.at("big_loss").size(), 0u);
  RunResult list = rules(db, "--list --csv", tmp);
  EXPECT_EQ(list.out.find("commented_out"), std::string::npos) << list.out;
  EXPECT_EQ(list.out.find("big_loss_cfg"), std::string::npos) << list.out;
  EXPECT_NE(list.out.find("big_loss,batch,threshold,real,10,a mean loss above this is a finding,10,"),
            std::string::npos)
      << list.out;
  RunResult bad = rules(db, "--param big_loss.threshold=0x10", tmp);
  EXPECT_EQ(bad.status, 1);
  EXPECT_NE(bad.err.find("big_loss.threshold=0x10"), std::string::npos) << bad.err;
}

// A run after one that installed the rules installs nothing (the schema stays as it was: parsing
// every rule again costs more than evaluating them on a small trial), and a schema changed since
// (here a rule's view dropped, as a stock sqlite3 shell may) is installed again.
TEST(RulesCli, RulesAreInstalledOnlyWhenTheSchemaChanged) {
  TempDir tmp;
  const std::string db = tmp / "t.db";
  ingest(kFixtures + "/pt_bad_init", db, "pt_bad_init", tmp);
  auto exec = [&](const std::string& sql) {
    sqlite3* h = nullptr;
    EXPECT_EQ(sqlite3_open(db.c_str(), &h), SQLITE_OK);
    int64_t version = -1;
    {
      Statement q(h, sql);
      if (q.step()) version = q.int64(0);
    }
    sqlite3_close(h);
    return version;
  };
  auto schema_version = [&] { return exec("PRAGMA schema_version"); };
  RunResult first = rules(db, "", tmp);
  ASSERT_EQ(first.status, 0) << first.err;
  const Findings want = recorded(db, "pt_bad_init");
  const int64_t installed = schema_version();
  RunResult again = rules(db, "--rerun", tmp);
  ASSERT_EQ(again.status, 0) << again.err;
  EXPECT_EQ(schema_version(), installed);
  EXPECT_EQ(recorded(db, "pt_bad_init"), want);
  exec("DROP VIEW rule_vanishing_gradient");
  RunResult changed = rules(db, "--rerun", tmp);
  ASSERT_EQ(changed.status, 0) << changed.err;
  EXPECT_EQ(exec("SELECT count(*) FROM sqlite_schema WHERE name = 'rule_vanishing_gradient'"), 1);
  EXPECT_EQ(recorded(db, "pt_bad_init"), want);
}

// A "loss" that holds strings is skipped, not a failure of every later evaluation.
TEST(RulesCli, StringLossIsSkipped) {
  TempDir tmp;
  const std::string db = tmp / "t.db";
  ingest(kFixtures + "/core_dtypes", db, "core_dtypes", tmp);
  RunResult r = rules(db, "--rule overfit --param overfit.tensor_regex=text/labels", tmp);
  EXPECT_EQ(r.status, 0) << r.err;
}

// Bad values are refused when given, naming RULE.KEY, and nothing of the command is stored.
TEST(RulesCli, BadParametersAreRefusedAndNothingIsStored) {
  TempDir tmp;
  const std::string db = tmp / "t.db";
  ingest(kFixtures + "/dist2", db, "dist2", tmp);
  ASSERT_EQ(rules(db, "", tmp).status, 0);
  auto params = [&] {
    sqlite3* h = nullptr;
    sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READONLY, nullptr);
    std::set<std::string> rows;
    {
      Statement q(h, "SELECT ifnull(trial, '*') || '|' || rule || '|' || param || '|' || value FROM rule_param");
      while (q.step()) rows.insert(q.text(0));
    }
    sqlite3_close(h);
    return rows;
  };
  const std::set<std::string> stored = params();
  const std::pair<const char*, const char*> bad[] = {
      {"dead_relu.threshold_layer=abc", "not a decimal number"},
      {"overfit.ratio_threshold=nan", "not a decimal number"},
      {"overfit.ratio_threshold=", "not a decimal number"},
      {"overfit.ratio_threshold=0x10", "not a decimal number"},
      {"overfit.ratio_threshold=inf", "not a decimal number"},
      {"overfit.ratio_threshold=1e999", "not a decimal number"},
      {"overfit.patience=2.5", "not an integer"},
      {"dead_relu.tensor_regex=.*relu(", ".*relu("},
      {"exploding_tensor.only_nan=maybe", "not true or false"},
      {"exploding_tensor.only_nan=1", "not true or false"},
      {"saturated_activation.threshold_tanh=-1,x", "'x' is not a decimal number"},
      {"weight_update_ratio.num_steps=many", "not an integer (a decimal integer, or none)"},
      {"loss_not_decreasing.mode=TRAINING", "not a mode"},
      {"similar_across_runs.other_trial=dist", "no such trial"},
  };
  for (const auto& [setting, why] : bad) {
    RunResult r = rules(db, "--param vanishing_gradient.threshold=5 --param " + quote(setting), tmp);
    EXPECT_NE(r.status, 0) << setting;
    EXPECT_NE(r.err.find(setting), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(why), std::string::npos) << r.err;
    EXPECT_EQ(params(), stored) << setting;  // the good one before it was not stored either
  }
  // The types are the declarations', not what was stored since.
  ASSERT_EQ(rules(db, "--param exploding_tensor.only_nan=True --param tensor_variance.max_threshold=inf", tmp).status,
            0);
  EXPECT_EQ(rules(db,
                  "--param exploding_tensor.only_nan=false --param weight_update_ratio.num_steps=3 "
                  "--param similar_across_runs.other_trial=dist2",
                  tmp)
                .status,
            0);
}

// SageMaker Debugger's example custom rule (mean |gradient| above a threshold), written in SQL as
// docs/RULES.md shows it.
TEST(RulesCli, CustomRuleFileRunsLikeABuiltInRule) {
  TempDir tmp;
  std::string db = tmp / "t.db";
  ingest(kFixtures + "/pt_bad_init", db, "pt_bad_init", tmp);
  // The rule exactly as docs/RULES.md shows it (at most 10 lines of SQL), with its threshold set.
  std::string rule = tmp / "large_gradient.sql";
  {
    std::ifstream doc(TRIALDB_SOURCE "/docs/RULES.md");
    std::stringstream text;
    text << doc.rdbuf();
    const std::string md = text.str();
    const size_t start = md.find("```sql\n-- @rule custom_gradient ");
    ASSERT_NE(start, std::string::npos);
    const size_t body = start + 7, end = md.find("```", body);
    std::string sql = md.substr(body, end - body);
    EXPECT_LE(std::count(sql.begin(), sql.end(), '\n'), 9) << sql;  // the declaration + at most 7 lines of SQL
    for (size_t at; (at = sql.find("custom_gradient")) != std::string::npos;) sql.replace(at, 15, "large_gradient");
    std::ofstream(rule) << sql;
  }
  RunResult r = rules(
      db, "--rule-file " + quote(rule) + " --rule large_gradient --exit-code --param large_gradient.threshold=0.01",
      tmp);
  ASSERT_EQ(r.status, 3) << r.err;

  // The same answer straight from the public views.
  sqlite3* h = nullptr;
  sqlite3_open(db.c_str(), &h);
  std::set<Key> want;
  {
    // pt_bad_init has TRAIN and EVAL steps only, so reductions.step is the global step.
    Statement q(h,
                "SELECT r.step, r.tensor, r.worker FROM reductions r "
                "JOIN collections c ON c.trial = r.trial AND c.tensor = r.tensor AND c.collection = 'gradients' "
                "WHERE r.trial = 'pt_bad_init' AND r.reduction = 'mean' AND r.abs = 1 AND r.value > 0.01");
    while (q.step()) want.insert({q.int64(0), q.text(1), q.text(2)});
  }
  sqlite3_close(h);
  ASSERT_FALSE(want.empty());
  EXPECT_EQ(recorded(db, "pt_bad_init")["large_gradient"], want);

  // It stays registered: a later run (no --rule-file) evaluates it on new steps only.
  RunResult again = rules(db, "--rule large_gradient --exit-code", tmp);
  EXPECT_EQ(again.status, 0) << again.err;

  std::string broken = tmp / "broken.sql";
  std::ofstream(broken) << "-- @rule broken batch\nCREATE VIEW rule_broken AS SELECT 1 AS trial;";
  RunResult b = rules(db, "--rule-file " + quote(broken), tmp);
  EXPECT_NE(b.status, 0);
  EXPECT_NE(b.err.find("broken.sql"), std::string::npos) << b.err;
  EXPECT_NE(b.err.find("columns"), std::string::npos) << b.err;
  std::string none = tmp / "none.sql";
  std::ofstream(none) << "-- @rule none_made batch\nSELECT 1;";
  RunResult n = rules(db, "--rule-file " + quote(none), tmp);
  EXPECT_NE(n.status, 0);
  EXPECT_NE(n.err.find("creates no view rule_none_made"), std::string::npos) << n.err;
}

TEST(RulesCli, OnFindingRunsOncePerNewFindingWithItsEnvironment) {
  TempDir tmp;
  std::string db = tmp / "t.db", log = tmp / "log.txt";
  ingest(kFixtures + "/core_dtypes", db, "core_dtypes", tmp);
  std::string cmd =
      "echo "
      "\"$TRIALDB_TRIAL|$TRIALDB_RULE|$TRIALDB_STEP|$TRIALDB_MODE|$TRIALDB_MODE_STEP|$TRIALDB_TENSOR|$TRIALDB_WORKER|$"
      "TRIALDB_VALUE\" >> " +
      quote(log);
  RunResult r = rules(db, "--exit-code --on-finding " + quote(cmd), tmp);
  EXPECT_EQ(r.status, 3) << r.err;
  std::ifstream in(log);
  std::set<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.insert(line);
  EXPECT_EQ(lines, (std::set<std::string>{"core_dtypes|exploding_tensor|10|TRAIN|2|layer/weight|worker_0|2",
                                          "core_dtypes|overfit|7|EVAL|0|scalar/loss|worker_0|3"}));
  RunResult again = rules(db, "--exit-code --on-finding " + quote(cmd), tmp);
  EXPECT_EQ(again.status, 0);
  std::ifstream in2(log);
  size_t n = 0;
  for (std::string line; std::getline(in2, line);) ++n;
  EXPECT_EQ(n, 2u);

  // A failing command is reported (exit 4 without --exit-code).
  std::string db2 = tmp / "t2.db";
  ingest(kFixtures + "/core_dtypes", db2, "core_dtypes", tmp);
  RunResult fail = rules(db2, "--on-finding 'exit 7'", tmp);
  EXPECT_EQ(fail.status, 4);
  EXPECT_NE(fail.err.find("exited with 7"), std::string::npos) << fail.err;
}

// ---------------------------------------------------------------------------------------------
// The steps a runner that lives across ingests (ingest --follow --rules) owes: it counts only the
// steps completed since its last call, so a step that completes below those it evaluated is owed
// through the ingest's rule_rerun (StepCompletion::revise_rules_from), not found by a count.

TEST(OwedSteps, AStepCompletingLateIsOwedToTheRunnerThatLives) {
  TempDir tmp;
  const fs::path trial = tmp.path / "live";
  TrialWriter w(trial.string());
  trialdb::CollectionSpec gradients;
  gradients.name = "gradients";
  gradients.include_regex = {"^gradient/"};
  w.write_collections("worker_0", 1, {gradients});
  auto write_step = [&](int step) {
    const std::vector<float> g = {1, -2, 3, static_cast<float>(step)};
    auto s = w.begin_step(step, "worker_0", TrialMode::kTrain, step);
    s->add_tensor("gradient/w", DType::Float32, {4}, g.data(), 4 * g.size());
    s->close();
  };
  for (int step : {0, 1, 2, 4, 5}) write_step(step);  // step 3 lands late
  const std::string db_path = tmp / "t.db";
  ingest(trial.string(), db_path, "live", tmp);

  Database db(db_path, trialdb::OpenMode::kExisting);
  trialdb::rules::RuleOptions opt;
  opt.rules = {"vanishing_gradient"};
  trialdb::rules::RuleRunner runner(db, opt);
  auto evaluated = [&] {
    Statement q(db.handle(),
                "SELECT group_concat(step, ',') FROM (SELECT step FROM rule_evaluated "
                "WHERE trial = 'live' AND rule = 'vanishing_gradient' ORDER BY step)");
    q.step();
    return q.text(0);
  };
  runner.evaluate_new_steps();
  EXPECT_EQ(evaluated(), "0,1,2,4,5");
  write_step(6);
  ingest(trial.string(), db_path, "live", tmp);
  runner.evaluate_new_steps();
  EXPECT_EQ(evaluated(), "0,1,2,4,5,6");

  write_step(3);  // below the steps already evaluated
  ingest(trial.string(), db_path, "live", tmp);
  runner.evaluate_new_steps();
  EXPECT_EQ(evaluated(), "0,1,2,3,4,5,6");
}

// ---------------------------------------------------------------------------------------------
// stalled_training, through the C++ API with a controlled clock.

TEST(StalledTraining, FiresOnceOnALiveTrialThatStopsGrowingAndNeverOnAnEndedOne) {
  TempDir tmp;
  fs::path live = tmp.path / "live";
  fs::copy(kFixtures + "/dist2", live, fs::copy_options::recursive);
  fs::remove(live / "training_job_end.ts");
  // Hold back the last step (both workers' files), so the trial can grow later.
  std::vector<fs::path> held;
  for (auto& e : fs::recursive_directory_iterator(live))
    if (e.is_regular_file() && e.path().filename().string().rfind("000000000008_", 0) == 0) held.push_back(e.path());
  ASSERT_EQ(held.size(), 4u);
  fs::path stash = tmp.path / "stash";
  fs::create_directories(stash);
  for (size_t i = 0; i < held.size(); ++i) fs::rename(held[i], stash / std::to_string(i));

  std::string db_path = tmp / "t.db";
  ingest(live.string(), db_path, "live", tmp);
  fs::copy(kFixtures + "/dist2", tmp.path / "ended", fs::copy_options::recursive);
  ingest((tmp.path / "ended").string(), db_path, "ended", tmp);

  double now = 1.0e9;
  Database db(db_path, trialdb::OpenMode::kExisting);
  trialdb::rules::RuleOptions opt;
  opt.rules = {"stalled_training"};
  opt.params = {"stalled_training.threshold=60"};
  opt.clock = [&] { return now; };
  trialdb::rules::RuleRunner runner(db, opt);
  EXPECT_TRUE(runner.evaluate_new_steps().empty());  // progress is seen now
  now += 59;
  EXPECT_TRUE(runner.evaluate_new_steps().empty());
  now += 2;
  auto f = runner.evaluate_new_steps();
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].trial, "live");
  EXPECT_EQ(f[0].rule, "stalled_training");
  EXPECT_EQ(f[0].step, 6);  // the last complete step
  EXPECT_EQ(f[0].tensor, "no_progress");
  EXPECT_DOUBLE_EQ(*f[0].value, 61.0);
  now += 1000;
  EXPECT_TRUE(runner.evaluate_new_steps().empty());  // recorded once per stalled step

  // The trial grows again: the clock restarts from the new last step.
  for (size_t i = 0; i < held.size(); ++i) fs::rename(stash / std::to_string(i), held[i]);
  ingest(live.string(), db_path, "live", tmp);
  EXPECT_TRUE(runner.evaluate_new_steps().empty());
  now += 61;
  f = runner.evaluate_new_steps();
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].step, 8);
}

}  // namespace
