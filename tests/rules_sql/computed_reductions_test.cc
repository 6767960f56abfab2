// The reductions the ingest marks as computed (value.red_computed, the `reductions` view's column
// `computed`) are what rules read instead of the blobs (rules_base.sql, rule_now_reduction), so
// each must be exactly tensor_reduce()'s answer for the stored value: every value, every kind, on
// every fixture, a synthetic trial of the XGBoost profile (strings, per-feature scalars) and a trial
// of every dtype with NaN, infinities, signed zeros, one-element values whose square over- or
// underflows, and saved reductions the hook wrote before and after the raw value (those are the
// hook's, not computed). SQLite keeps no sign of zero, so "exactly" is IS: equal, or both NULL
// (NaN).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "ingest/writer/trial_writer.h"
#include "rules_sql/rule_runner.h"
#include "schema/database.h"
#include "tests/common/temp_dir.h"
#include "tests/rules_sql/rules_cli.h"

namespace {

using namespace trialdb::test::rules_cli;
using trialdb::DType;
using trialdb::TrialMode;
using trialdb::TrialWriter;

// Raw bytes of `values` converted to dtype (bfloat16: float32's top half; float16: a bit pattern
// taken from float32's, not its conversion: any value of the dtype serves to reduce).
std::vector<uint8_t> bytes_of(DType t, const std::vector<double>& values) {
  std::vector<uint8_t> out;
  auto put = [&](const auto x) {
    const auto* p = reinterpret_cast<const uint8_t*>(&x);
    out.insert(out.end(), p, p + sizeof x);
  };
  for (double x : values) {
    const double finite = std::isfinite(x) ? x : 7;
    switch (t) {
      case DType::Bool: put(static_cast<uint8_t>(x != 0)); break;
      case DType::Int8: put(static_cast<int8_t>(std::fmod(finite, 100))); break;
      case DType::UInt8: put(static_cast<uint8_t>(std::fmod(std::fabs(finite), 200))); break;
      case DType::Int16: put(static_cast<int16_t>(std::fmod(finite * 100, 30000))); break;
      case DType::UInt16: put(static_cast<uint16_t>(std::fmod(std::fabs(finite) * 100, 60000))); break;
      case DType::Int32: put(static_cast<int32_t>(std::fmod(finite * 1e6, 2e9))); break;
      case DType::UInt32: put(static_cast<uint32_t>(std::fmod(std::fabs(finite) * 1e6, 4e9))); break;
      case DType::Int64: put(static_cast<int64_t>(std::fmod(finite * 1e15, 9e18))); break;
      case DType::UInt64: put(static_cast<uint64_t>(std::fmod(std::fabs(finite) * 1e15, 1.8e19))); break;
      case DType::Float16:
      case DType::BFloat16: {
        const float f = static_cast<float>(x);
        uint32_t bits;
        std::memcpy(&bits, &f, 4);
        const uint16_t half = t == DType::BFloat16
                                  ? static_cast<uint16_t>(bits >> 16)
                                  : static_cast<uint16_t>((bits >> 16 & 0x8000) | (bits >> 13 & 0x7fff));
        put(half);
        break;
      }
      case DType::Float32: put(static_cast<float>(x)); break;
      default: put(x); break;
    }
  }
  return out;
}

// A trial of every numeric dtype and the values that test a reduction kernel's edges.
void write_edge_trial(const std::string& root) {
  TrialWriter w(root);
  w.write_collections("worker_0", 1, {});
  const DType dtypes[] = {DType::Bool,     DType::Int8,    DType::UInt8,  DType::Int16,  DType::UInt16,
                          DType::Int32,    DType::UInt32,  DType::Int64,  DType::UInt64, DType::Float16,
                          DType::BFloat16, DType::Float32, DType::Float64};
  std::mt19937_64 rng(7);
  std::normal_distribution<double> g(0.0, 3.0);
  for (int64_t step = 0; step < 2; ++step) {
    auto s = w.begin_step(step, "worker_0", TrialMode::kTrain, step);
    int n = 0;
    for (DType t : dtypes)
      for (int size : {1, 3, 4, 5, 17, 1003}) {
        for (int special = 0; special < 4; ++special) {
          std::vector<double> v(size);
          for (double& x : v) x = g(rng) * (special == 3 ? 1e3 : 1);
          if (special == 1) v[size / 2] = (step ? -1 : 1) * INFINITY;
          if (special == 2) v[size - 1] = NAN;
          if (special == 3 && size > 1) v[0] = -0.0;
          const auto b = bytes_of(t, v);
          s->add_tensor("t" + std::to_string(n++), t, {size}, b.data(), b.size());
        }
      }
    // One-element values whose square over- or underflows (l2 is not |x| there), and signed zeros.
    for (double x : {1e200, -1e200, 1e-200, 5e-324, -0.0, 0.0, 3.5}) {
      s->add_tensor("s" + std::to_string(n++), DType::Float64, {}, &x, 8);
      const float f = static_cast<float>(x);
      s->add_tensor("s" + std::to_string(n++), DType::Float32, {1}, &f, 4);
    }
    // Saved reductions before and after the raw value: those kinds are the hook's.
    const std::vector<float> grad = {0.5f, -1.25f, 3.0f, 1e-3f, -7.0f};
    s->add_reduction("grad/before", "mean", true, 42.0);
    s->add_tensor("grad/before", DType::Float32, {5}, grad.data(), 4 * grad.size());
    s->add_tensor("grad/after", DType::Float32, {5}, grad.data(), 4 * grad.size());
    s->add_reduction("grad/after", "l2", false, 43.0);
    const float one = 2.5f;
    s->add_tensor("scalar/after", DType::Float32, {}, &one, 4);
    s->add_reduction("scalar/after", "variance", false, 44.0);
    s->close();
  }
  w.write_end_marker();
}

std::vector<int64_t> row(const std::string& db, const std::string& sql, const TempDir& tmp) {
  RunResult r = sh(quote(kBin) + " sql --db " + quote(db) + " --csv " + quote(sql), tmp);
  EXPECT_EQ(r.status, 0) << r.err;
  std::vector<int64_t> out;
  const std::string line = r.out.substr(r.out.find('\n') + 1);  // after the header
  size_t at = 0;
  while (at < line.size() && line[at] != '\n') {
    size_t end = line.find_first_of(",\n", at);
    out.push_back(std::stoll(line.substr(at, end - at)));
    at = end + (end < line.size() && line[end] == ',');
  }
  return out;
}

TEST(ComputedReductions, EqualTensorReduceOnEveryValueAndKind) {
  TempDir tmp;
  const std::string db = tmp / "t.db";
  for (const char* fixture : {"pt_bad_init", "pt_good_init", "pt_reductions", "core_dtypes", "dist2", "zoo"})
    ingest(kFixtures + "/" + fixture, db, fixture, tmp);
  const std::string edges = (tmp.path / "edges").string();
  write_edge_trial(edges);
  ingest(edges, db, "edges", tmp);
  const std::string xgb = (tmp.path / "xgb").string();
  RunResult s = sh(quote(kBin) + " synth --profile " +
                       quote(std::string(TRIALDB_SOURCE) + "/bench/profiles/xgboost_binary.json") + " " + quote(xgb),
                   tmp);
  ASSERT_EQ(s.status, 0) << s.err;
  ingest(xgb, db, "xgb", tmp);

  // Every computed reduction of a value with its bytes stored, against tensor_reduce() of them.
  const auto all = row(db,
                       "SELECT count(*), ifnull(sum(r.value IS tensor_reduce(v.value, r.reduction, r.abs)), 0), "
                       "count(DISTINCT r.trial), ifnull(sum(r.value IS NULL), 0) "
                       "FROM reductions r JOIN tensor_values v USING (trial, tensor, step, worker) "
                       "WHERE r.global_step = v.global_step AND r.computed AND v.value IS NOT NULL",
                       tmp);
  ASSERT_EQ(all.size(), 4u);
  EXPECT_GT(all[0], 50000);   // not vacuous: every trial's values
  EXPECT_EQ(all[1], all[0]);  // each equal
  EXPECT_EQ(all[2], 8);       // from every trial
  EXPECT_GT(all[3], 1000);    // NaNs among them
  // The one-element edge values and every one of their kinds, by name (the view derives them).
  const auto scalars = row(db,
                           "SELECT count(*), sum(r.computed), "
                           "sum(r.computed OR r.value IS NOT tensor_reduce(v.value, r.reduction, r.abs)) "
                           "FROM reductions r JOIN tensor_values v USING (trial, tensor, step, worker) "
                           "WHERE r.trial = 'edges' AND r.tensor GLOB 's*' AND r.tensor <> 'scalar/after'",
                           tmp);
  ASSERT_EQ(scalars.size(), 3u);
  EXPECT_EQ(scalars[0], 2 * 14 * 18);
  EXPECT_LT(scalars[1], scalars[0]);  // l2 of the squares that over- or underflow is not computed
  EXPECT_EQ(scalars[2], scalars[0]);  // and there it differs from the kernel's
  // The hook's saved reductions are not computed, whichever came first, and the others are.
  const auto saved =
      row(db,
          "SELECT sum(NOT computed), sum(NOT computed AND (tensor, reduction, abs) IN "
          "(VALUES ('grad/before', 'mean', 1), ('grad/after', 'l2', 0), ('scalar/after', 'variance', 0))), "
          "sum(computed) FROM reductions WHERE trial = 'edges' AND tensor NOT GLOB '[st][0-9]*'",
          tmp);
  ASSERT_EQ(saved.size(), 3u);
  EXPECT_EQ(saved[0], 2 * 3);
  EXPECT_EQ(saved[1], 2 * 3);
  EXPECT_EQ(saved[2], 2 * (3 * 18 - 3));
}

// Every finding of `rule`, its value keyed by (step, tensor, worker). The tests below give each
// rule a threshold every value crosses, so every value is a finding: weight_update_ratio's ratio
// at step S (a large threshold of 0), vanishing_gradient's mean |gradient| (a threshold of 1e300).
std::map<Key, double> finding_values(const std::string& db_path, const std::string& rule) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open_v2(db_path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  std::map<Key, double> out;
  {
    Statement q(db, "SELECT step, tensor, worker, value FROM rule_finding WHERE rule = ?1");
    q.bind(1, rule);
    while (q.step()) out[{q.int64(0), q.text(1), q.text(2)}] = q.real(3);
  }
  sqlite3_close(db);
  return out;
}

int changed_rows(const std::string& db_path, const std::string& sql) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open(db_path.c_str(), &db), SQLITE_OK);
  EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
  const int n = sqlite3_changes(db);
  sqlite3_close(db);
  return n;
}

// weight_update_ratio divides by the l2 of the earlier value that the ingest stored
// (value.r_l2), when its computed bit says it is the ingest's: a stored l2 made twice as large
// halves every ratio. Without the bit it reduces the blob, the same number as the stored one was.
TEST(ComputedReductions, WeightUpdateRatioDividesByTheStoredL2) {
  TempDir tmp;
  const std::string db = tmp / "t.db";
  ingest(kFixtures + "/pt_bad_init", db, "pt_bad_init", tmp);
  const std::string args = "--rule weight_update_ratio --param weight_update_ratio.large_threshold=0";
  ASSERT_EQ(rules(db, args, tmp).status, 0);
  const std::map<Key, double> ratios = finding_values(db, "weight_update_ratio");
  ASSERT_GT(ratios.size(), 10u);

  const std::string l2_bit = "(SELECT idx FROM reduction_kind WHERE reduction = 'l2' AND abs = 0)";
  ASSERT_GT(changed_rows(db, "UPDATE value SET r_l2 = 2 * r_l2 WHERE red_src = 1 AND (red_computed >> " + l2_bit +
                                 ") & 1 AND r_l2 > 0"),
            10);
  ASSERT_EQ(rules(db, args + " --rerun", tmp).status, 0);
  const std::map<Key, double> halved = finding_values(db, "weight_update_ratio");
  ASSERT_EQ(halved.size(), ratios.size());
  for (const auto& [key, ratio] : ratios)
    EXPECT_NEAR(halved.at(key), ratio / 2, 1e-6 * ratio) << std::get<1>(key) << " at step " << std::get<0>(key);

  ASSERT_GT(changed_rows(db, "UPDATE value SET red_computed = red_computed & ~(1 << " + l2_bit + ")"), 10);
  ASSERT_EQ(rules(db, args + " --rerun", tmp).status, 0);
  EXPECT_EQ(finding_values(db, "weight_update_ratio"), ratios);
}

// The rule views read a value's computed reductions from its row by key (rules_base.sql,
// rule_now_reduction_by_tensor) with the reductions view's expression: stored mean |v| made twice
// as large doubles every vanishing_gradient value; without the computed bit the rule reduces the
// blob, the number the ingest had stored.
TEST(ComputedReductions, VanishingGradientReadsTheStoredMeanAbs) {
  TempDir tmp;
  const std::string db = tmp / "t.db";
  ingest(kFixtures + "/pt_bad_init", db, "pt_bad_init", tmp);
  const std::string args = "--rule vanishing_gradient --param vanishing_gradient.threshold=1e300";
  ASSERT_EQ(rules(db, args, tmp).status, 0);
  const std::map<Key, double> values = finding_values(db, "vanishing_gradient");
  ASSERT_GT(values.size(), 10u);

  const std::string bit = "(SELECT idx FROM reduction_kind WHERE reduction = 'mean' AND abs = 1)";
  ASSERT_GT(changed_rows(db, "UPDATE value SET ra_mean = 2 * ra_mean WHERE red_src = 1 AND (red_computed >> " + bit +
                                 ") & 1 AND ra_mean > 0"),
            10);
  ASSERT_EQ(rules(db, args + " --rerun", tmp).status, 0);
  const std::map<Key, double> doubled = finding_values(db, "vanishing_gradient");
  ASSERT_EQ(doubled.size(), values.size());
  for (const auto& [key, value] : values)
    EXPECT_EQ(doubled.at(key), 2 * value) << std::get<1>(key) << " at step " << std::get<0>(key);

  ASSERT_GT(changed_rows(db, "UPDATE value SET red_computed = red_computed & ~(1 << " + bit + ")"), 10);
  ASSERT_EQ(rules(db, args + " --rerun", tmp).status, 0);
  EXPECT_EQ(finding_values(db, "vanishing_gradient"), values);
}

// rule_now_reduction and rule_now_reduction_by_tensor give, for every value of the batch and
// every kind, the reductions view's computed value where there is one, else tensor_reduce() of
// the blob: checked with every stored reduction altered (so that the two differ) on a batch of
// all the steps of two fixtures, one with two workers.
TEST(ComputedReductions, RuleViewsGiveTheViewsComputedReductions) {
  TempDir tmp;
  const std::string db = tmp / "t.db";
  for (const char* fixture : {"pt_bad_init", "dist2"}) ingest(kFixtures + "/" + fixture, db, fixture, tmp);
  ASSERT_EQ(rules(db, "--rule tree_depth", tmp).status, 0);  // installs the rule views
  for (const char* column :
       {"r_min", "r_max", "r_mean", "r_prod", "r_std", "r_variance", "r_sum", "r_l1", "r_l2", "ra_min", "ra_max",
        "ra_mean", "ra_prod", "ra_std", "ra_variance", "ra_sum", "ra_l1", "ra_l2"})
    changed_rows(db, std::string("UPDATE value SET ") + column + " = 3 * " + column + " + 1");
  trialdb::Database d(db, trialdb::OpenMode::kExisting);
  trialdb::rules::RuleRunner runner(d, {});  // registers the SQL functions
  for (const char* trial : {"pt_bad_init", "dist2"}) {
    d.exec("DELETE FROM rule_batch");
    d.exec(std::string("INSERT INTO rule_batch(trial, step, mode, mode_step, tensor_step, now) "
                       "SELECT trial, step, mode, mode_step, CASE WHEN mode = 'GLOBAL' THEN mode_step ELSE step END, 0 "
                       "FROM steps WHERE complete AND trial = '") +
           trial + "'");
    for (const char* view : {"rule_now_reduction", "rule_now_reduction_by_tensor"}) {
      Statement q(d.handle(), std::string("SELECT count(*), sum(n.value IS coalesce((SELECT r.value FROM reductions r "
                                          "WHERE r.trial = n.trial AND r.tensor = n.tensor AND r.step = v.step "
                                          "AND r.global_step = n.step AND r.worker = n.worker AND r.reduction = "
                                          "n.reduction AND r.abs = n.abs AND r.computed), "
                                          "tensor_reduce(v.value, n.reduction, n.abs))), "
                                          "sum(n.value IS NOT tensor_reduce(v.value, n.reduction, n.abs)) FROM ") +
                                  view +
                                  " n JOIN tensor_values v ON v.trial = n.trial AND v.tensor = n.tensor "
                                  "AND v.global_step = n.step AND v.worker = n.worker");
      ASSERT_TRUE(q.step());
      EXPECT_GT(q.int64(0), 1000) << trial << ", " << view;            // not vacuous
      EXPECT_EQ(q.int64(1), q.int64(0)) << trial << ", " << view;      // each as the view says
      EXPECT_GT(q.int64(2), q.int64(0) / 2) << trial << ", " << view;  // mostly the altered ones
    }
  }
}

}  // namespace
