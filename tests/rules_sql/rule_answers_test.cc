// Rule answers on trials the fixtures do not cover: a trial whose only worker is worker_7,
// XGBoost-like predictions that are probabilities (class indices as the definitions read them),
// and evaluations replaced only when the new one succeeded.
#include <gtest/gtest.h>

#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "ingest/writer/trial_writer.h"
#include "tests/common/temp_dir.h"
#include "tests/rules_sql/rules_cli.h"

namespace {

using namespace trialdb::test::rules_cli;
using trialdb::DType;
using trialdb::TrialMode;
using trialdb::TrialWriter;

int64_t count(const std::string& db, const std::string& sql) {
  sqlite3* h = nullptr;
  sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READONLY, nullptr);
  int64_t n = -1;
  {
    Statement q(h, sql);
    if (q.step()) n = q.int64(0);
  }
  sqlite3_close(h);
  return n;
}

// Findings about a whole step or a series name the trial's own worker: on a trial whose only
// worker is worker_7, overfit and poor_weight_initialization report worker_7.
TEST(RuleAnswers, FindingsNameTheTrialsOwnWorker) {
  TempDir tmp;
  const std::string trial = (tmp.path / "w7").string(), db = tmp / "t.db";
  TrialWriter w(trial);
  trialdb::CollectionSpec losses;
  losses.name = "losses";
  losses.tensor_names = {"loss"};
  w.write_collections("worker_7", 1, {losses});
  // TRAIN steps 0..7 with a loss that does not fall, then EVAL steps 8 and 9 with twice the loss.
  for (int64_t step = 0; step < 10; ++step) {
    const bool eval = step >= 8;
    auto s = w.begin_step(step, "worker_7", eval ? TrialMode::kEval : TrialMode::kTrain, eval ? step - 8 : step);
    const float loss = eval ? 2.0f : 1.0f;
    s->add_tensor("loss", DType::Float32, {}, &loss, sizeof loss);
    s->close();
  }
  w.write_end_marker();
  ingest(trial, db, "w7", tmp);
  RunResult r = rules(db, "", tmp);
  ASSERT_EQ(r.status, 0) << r.err;
  Findings got = recorded(db, "w7");
  const std::set<Key> overfit = {{8, "loss", "worker_7"}, {9, "loss", "worker_7"}};
  EXPECT_EQ(got["overfit"], overfit) << diff(got, {{"overfit", overfit}});
  // The 6th, 7th and 8th TRAIN losses are not below the one 5 before them.
  const std::set<Key> poor = {{5, "loss", "worker_7"}, {6, "loss", "worker_7"}, {7, "loss", "worker_7"}};
  EXPECT_EQ(got["poor_weight_initialization"], poor) << diff(got, {{"poor_weight_initialization", poor}});
  EXPECT_EQ(count(db, "SELECT count(*) FROM rule_findings WHERE worker <> 'worker_7'"), 0);
}

// An XGBoost binary:logistic job saves probabilities as predictions. A label or prediction is a
// class index, truncated toward zero as numpy's astype(int) does, so every probability below 1
// is class 0: C = [[4, 0], [6, 0]] at each step. confusion: class 1 is never predicted right
// (class 0 always is); class_imbalance: class 1 is all mispredicted. Each rule notes once that
// the predictions are not class indices.
TEST(RuleAnswers, ProbabilitiesAreTruncatedToClassIndicesAndNotedOnce) {
  TempDir tmp;
  const std::string trial = (tmp.path / "xgb").string(), db = tmp / "t.db";
  TrialWriter w(trial);
  w.write_collections("worker_0", 1, {});
  const std::vector<float> labels = {0, 0, 0, 0, 1, 1, 1, 1, 1, 1};
  const std::vector<float> predictions = {0.1f, 0.2f, 0.6f, 0.3f, 0.9f, 0.8f, 0.4f, 0.7f, 0.95f, 0.99f};
  for (int64_t step = 0; step < 3; ++step) {
    auto s = w.begin_step(step, "worker_0", TrialMode::kTrain, step);
    s->add_tensor("labels", DType::Float32, {10}, labels.data(), 4 * labels.size());
    s->add_tensor("predictions", DType::Float32, {10}, predictions.data(), 4 * predictions.size());
    s->close();
  }
  w.write_end_marker();
  ingest(trial, db, "xgb", tmp);
  RunResult r = rules(db, "--rule confusion --rule class_imbalance --param class_imbalance.samples=10", tmp);
  ASSERT_EQ(r.status, 0) << r.err;
  Findings got = recorded(db, "xgb");
  const std::set<Key> want = {{0, "class_1", "worker_0"}, {1, "class_1", "worker_0"}, {2, "class_1", "worker_0"}};
  EXPECT_EQ(got["confusion"], want) << diff(got, {{"confusion", want}});
  EXPECT_EQ(got["class_imbalance"], want) << diff(got, {{"class_imbalance", want}});
  EXPECT_EQ(count(db,
                  "SELECT count(*) FROM rule_findings WHERE rule = 'confusion' AND value = 0 AND message LIKE "
                  "'class 1: 0% of 6 predicted right%'"),
            3);
  EXPECT_EQ(count(db, "SELECT count(*) FROM rule_findings WHERE rule = 'class_imbalance' AND value = 1"), 3);
  for (const std::string note : {"note: confusion on trial xgb: predictions holds values that are not class indices "
                                 "(e.g. 0.1",
                                 "note: class_imbalance on trial xgb: the labels or predictions hold values that are "
                                 "not class indices"}) {
    EXPECT_NE(r.err.find(note), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find(note), r.err.rfind(note)) << r.err;  // once per trial and run
  }
  EXPECT_NE(r.err.find("class_imbalance.argmax=true"), std::string::npos) << r.err;
}

// Every (label, prediction) pair as the definitions count it, where the class-index trial above
// does not look: a NaN label has no class; a NaN prediction is counted in its label's row (so it
// is not a right prediction for confusion) and is not a class of its own, nor a value that is not
// a class index (no note); each worker's values are paired with its own, and class_imbalance
// reads the primary worker only. Per step, worker_0: labels 0 0 1 1 2 2 NaN 2, predictions
// 0 NaN 1 0 2 NaN 1 2. confusion: class 0 right 1 of 2, class 1 right 1 of 2 (1 of 2 as class
// 0), class 2 right 2 of 3; worker_1 predicts its 8 labels of class 5 right. class_imbalance:
// classes 0, 1, 2 with 2, 2, 3 labels a step (ratio 1.5), class 1 half mispredicted.
TEST(RuleAnswers, LabelPairsCountNaNsAndWorkersAsTheDefinitionsSay) {
  TempDir tmp;
  const std::string trial = (tmp.path / "nan").string(), db = tmp / "t.db";
  TrialWriter w(trial);
  w.write_collections("worker_0", 2, {});
  w.write_collections("worker_1", 2, {});
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> labels = {0, 0, 1, 1, 2, 2, nan, 2}, predictions = {0, nan, 1, 0, 2, nan, 1, 2};
  const std::vector<float> fives(8, 5.0f);
  for (int64_t step = 0; step < 2; ++step)
    for (const char* worker : {"worker_0", "worker_1"}) {
      const bool primary = std::string(worker) == "worker_0";
      auto s = w.begin_step(step, worker, TrialMode::kTrain, step);
      s->add_tensor("labels", DType::Float32, {8}, (primary ? labels : fives).data(), 4 * labels.size());
      s->add_tensor("predictions", DType::Float32, {8}, (primary ? predictions : fives).data(), 4 * labels.size());
      s->close();
    }
  w.write_end_marker();
  ingest(trial, db, "nan", tmp);
  RunResult r =
      rules(db,
            "--rule confusion --rule class_imbalance --param class_imbalance.samples=7 "
            "--param class_imbalance.threshold_imbalance=1.4 --param class_imbalance.threshold_misprediction=0.4",
            tmp);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err.find("class indices"), std::string::npos) << r.err;
  std::string got;
  sqlite3* h = nullptr;
  sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READONLY, nullptr);
  {
    Statement q(
        h,
        "SELECT rule || ' ' || step || ' ' || tensor || ' ' || worker || ' ' || printf('%.4f', value) || ' ' || "
        "message FROM rule_findings ORDER BY rule, step, tensor, worker");
    while (q.step()) got += q.text(0) + "\n";
  }
  sqlite3_close(h);
  std::string want;
  for (int step = 0; step < 2; ++step) {
    const std::string at = " " + std::to_string(step) + " ";
    const std::string n1 = step == 0 ? "2" : "4", n2 = step == 0 ? "3" : "6";
    want += "class_imbalance" + at + "class_1 worker_0 0.5000 50% of class 1's " + n1 +
            " labels were mispredicted (threshold 40%)\n";
    want += "class_imbalance" + at + "imbalance worker_0 1.5000 the largest class has " + n2 +
            " labels, the smallest " + n1 + "\n";
  }
  for (int step = 0; step < 2; ++step) {
    const std::string at = " " + std::to_string(step) + " ";
    want += "confusion" + at +
            "class_0 worker_0 0.5000 class 0: 50% of 2 predicted right (at least 90%), at most 0% as one other class "
            "(at most 10%)\n";
    want += "confusion" + at +
            "class_1 worker_0 0.5000 class 1: 50% of 2 predicted right (at least 90%), at most 50% as one other "
            "class (at most 10%)\n";
    want += "confusion" + at +
            "class_2 worker_0 0.6667 class 2: 66.7% of 3 predicted right (at least 90%), at most 0% as one other "
            "class (at most 10%)\n";
  }
  EXPECT_EQ(got, want);
}

// A parameter naming a trial must name one; a failed command keeps the findings recorded with
// the real one.
TEST(RuleAnswers, AnOtherTrialThatDoesNotExistChangesNothing) {
  TempDir tmp;
  const std::string db = tmp / "t.db";
  ingest(kFixtures + "/pt_bad_init", db, "pt_bad_init", tmp);
  ingest(kFixtures + "/pt_good_init", db, "pt_good_init", tmp);
  const std::string similar = "SELECT count(*) FROM rule_findings WHERE rule = 'similar_across_runs'";
  ASSERT_EQ(rules(db, "--trial pt_bad_init --param similar_across_runs.other_trial=pt_good_init", tmp).status, 0);
  const int64_t n = count(db, similar);
  ASSERT_GT(n, 0);
  RunResult typo = rules(db, "--trial pt_bad_init --param similar_across_runs.other_trial=pt_god_init", tmp);
  EXPECT_EQ(typo.status, 1);
  EXPECT_NE(typo.err.find("similar_across_runs.other_trial=pt_god_init: no such trial"), std::string::npos) << typo.err;
  EXPECT_EQ(count(db, similar), n);
}

// A rule evaluated again after a parameter changed replaces its findings only when the new
// evaluation succeeds: one that fails keeps the old findings (and the rerun stays owed).
TEST(RuleAnswers, AFailedReevaluationKeepsTheFindings) {
  TempDir tmp;
  const std::string db = tmp / "t.db", file = tmp / "reduce.sql";
  ingest(kFixtures + "/pt_bad_init", db, "pt_bad_init", tmp);
  std::ofstream(file)
      << "-- @rule reduced batch\n"
         "-- @param how text mean the reduction of the loss compared\n"
         "CREATE VIEW rule_reduced AS\n"
         "SELECT n.trial, n.step, n.tensor, n.worker, tensor_reduce(n.value, cfg.how) AS value, 'x' AS message\n"
         "FROM rule_now n, rule_reduced_cfg AS cfg WHERE n.tensor = 'CrossEntropyLoss_output_0';\n";
  ASSERT_EQ(rules(db, "--rule-file " + quote(file) + " --rule reduced", tmp).status, 0);
  const Findings before = recorded(db, "pt_bad_init");
  ASSERT_GT(before.at("reduced").size(), 0u);
  RunResult r = rules(db, "--rule reduced --param reduced.how=nosuch", tmp);
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.err.find("rule reduced on trial pt_bad_init"), std::string::npos) << r.err;
  EXPECT_EQ(recorded(db, "pt_bad_init"), before);
  EXPECT_EQ(count(db, "SELECT count(*) FROM rule_rerun WHERE rule = 'reduced'"), 1);
  ASSERT_EQ(rules(db, "--rule reduced --param reduced.how=max", tmp).status, 0);
  EXPECT_EQ(count(db, "SELECT count(*) FROM rule_rerun"), 0);
  EXPECT_EQ(recorded(db, "pt_bad_init"), before);  // the same steps and tensors
}

}  // namespace
