// read_reduction_lines (schema/reduction_lines.h) gives the rows of the reductions view: for every
// reduction kind, on values with their reductions stored (some NaN, some absent), one-element
// values (reductions made from the element), a value without reductions, two workers at a step,
// a GLOBAL-mode step (numbered by its mode step, so two rows share a step number), steps past
// the trial's complete ones, another trial's tensor of the same name, and a step range.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include "schema/database.h"
#include "schema/reduction_lines.h"
#include "tests/common/temp_dir.h"

using namespace trialdb;
using trialdb::test::TempDir;

namespace {

struct Row {
  std::string tensor, mode;
  int64_t step;
  double value;  // NaN for NULL
  bool operator==(const Row& o) const {
    return tensor == o.tensor && mode == o.mode && step == o.step &&
           (value == o.value || (std::isnan(value) && std::isnan(o.value)));
  }
};

std::ostream& operator<<(std::ostream& os, const Row& r) {
  return os << r.tensor << " " << r.mode << " step " << r.step << " = " << r.value;
}

const std::vector<std::string> kTensors = {"w", "x", "none"};

void fill(Database& db) {
  db.exec("INSERT INTO trial(trial_id, name, path, complete_through) VALUES (1, 'a', '/a', 5), (2, 'b', '/b', 99)");
  db.exec("INSERT INTO worker(worker_id, trial_id, name) VALUES (1, 1, 'w0'), (2, 1, 'w1'), (3, 2, 'w0')");
  // Global steps 0-3 TRAIN, 4 EVAL, 5 GLOBAL (its mode step 2 is its step number), 6-7 not complete.
  db.exec(
      "INSERT INTO step(trial_id, step, mode, mode_step, tensor_step) VALUES "
      "(1, 0, 'TRAIN', 0, 0), (1, 1, 'TRAIN', 1, 1), (1, 2, 'TRAIN', 2, 2), (1, 3, 'TRAIN', 3, 3), "
      "(1, 4, 'EVAL', 0, 4), (1, 5, 'GLOBAL', 2, 2), (1, 6, 'TRAIN', 4, 6), (1, 7, 'TRAIN', 5, 7), "
      "(2, 0, 'TRAIN', 0, 0)");
  db.exec("INSERT INTO tensor(tensor_id, trial_id, name) VALUES (1, 1, 'w'), (2, 1, 'x'), (3, 1, 'none'), (4, 2, 'w')");
  // w: reductions stored (red_src 1); red_mask 0x3ff: the first 10 kinds (min .. ra_max's bit 9) present.
  const std::string cols =
      "trial_id, tensor_id, tensor_step, step_offset, worker_id, red_src, red_mask, r_min, r_max, "
      "r_mean, r_prod, r_std, r_variance, r_sum, r_l1, r_l2, ra_min, ra_max, ra_mean, ra_l2";
  for (int step = 0; step <= 7; ++step) {
    if (step == 5) continue;
    const std::string s = std::to_string(step), v = std::to_string(step + 0.5);
    db.exec("INSERT INTO value(" + cols + ") VALUES (1, 1, " + s + ", 0, 1, 1, 1023, -" + v + ", " + v + ", " +
            (step == 3 ? "NULL" : v + " / 3") + ", 2, 0.25, 0.0625, 7, 8, 9, 0, " + v + ", 1.5, 4)");
  }
  db.exec("INSERT INTO value(" + cols +
          ") VALUES (1, 1, 1, 0, 2, 1, 1023, -9, 9, 3, 2, 0.5, 0.25, 7, 8, 9, 0, 9, 4.5, 4)");
  db.exec("INSERT INTO value(" + cols +
          ") VALUES (1, 1, 2, 3, 1, 1, 1023, -1, 1, 0.125, 2, 0.5, 0.25, 7, 8, 9, 0, 1, 1, 4)");
  // x: one-element values (red_src 2: the element in r_min), negative ones among them.
  for (const auto& [step, offset, x] : std::vector<std::tuple<int, int, double>>{
           {0, 0, -2.5}, {1, 0, 3.0}, {2, 0, -0.75}, {2, 3, 6.0}, {4, 0, 1e300}, {6, 0, 5.0}})
    db.exec(
        "INSERT INTO value(trial_id, tensor_id, tensor_step, step_offset, worker_id, red_src, r_min) VALUES (1, 2, " +
        std::to_string(step) + ", " + std::to_string(offset) + ", 1, 2, " + std::to_string(x) + ")");
  db.exec(
      "INSERT INTO value(trial_id, tensor_id, tensor_step, step_offset, worker_id, red_src, shape) "
      "VALUES (1, 3, 0, 0, 1, 0, '[2]')");
  db.exec(
      "INSERT INTO value(trial_id, tensor_id, tensor_step, step_offset, worker_id, red_src, r_min) "
      "VALUES (2, 4, 0, 0, 3, 2, 42)");
}

std::vector<Row> from_view(Database& db, const std::string& reduction, int abs, int64_t from, int64_t to) {
  std::vector<Row> rows;
  Statement q(db.handle(),
              "SELECT tensor, mode, step, value FROM reductions\n"
              "WHERE trial = 'a' AND tensor = ?1 AND reduction = ?2 AND abs = ?3 AND step BETWEEN ?4 AND ?5\n"
              "ORDER BY step, global_step, worker");
  for (const std::string& tensor : kTensors) {
    q.reset();
    q.bind(1, tensor).bind(2, reduction).bind(3, abs).bind(4, from).bind(5, to);
    while (q.step()) rows.push_back({q.text(0), q.text(1), q.int64(2), q.is_null(3) ? std::nan("") : q.real(3)});
  }
  return rows;
}

std::vector<Row> from_lines(Database& db, const std::string& reduction, int abs, int64_t from, int64_t to) {
  std::vector<Row> rows;
  std::vector<std::string> modes;
  EXPECT_TRUE(read_reduction_lines(db.handle(), "main", "a", kTensors, reduction, abs != 0, from, to, &modes,
                                   [&](const ReductionRow& r) {
                                     rows.push_back({kTensors[r.tensor], modes.at(r.mode), r.step, r.value});
                                   }));
  return rows;
}

TEST(ReductionLines, RowsAreTheViewsForEveryReductionKind) {
  TempDir dir;
  Database db(dir / "t.db");
  register_reduction_row_function(db.handle());
  fill(db);
  Statement kinds(db.handle(), "SELECT reduction, abs FROM reduction_kind ORDER BY idx");
  int kinds_seen = 0;
  while (kinds.step()) {
    ++kinds_seen;
    const std::string reduction = kinds.text(0);
    const int abs = static_cast<int>(kinds.int64(1));
    for (const auto& [from, to] : std::vector<std::pair<int64_t, int64_t>>{
             {std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()}, {1, 2}}) {
      const std::vector<Row> expected = from_view(db, reduction, abs, from, to);
      EXPECT_EQ(from_lines(db, reduction, abs, from, to), expected)
          << reduction << " abs " << abs << " steps " << from << " to " << to;
      if (from == 1) continue;
      // The cases the data is there for: the view has rows of both tensors and the GLOBAL step.
      int global = 0, of_x = 0;
      for (const Row& r : expected) global += r.mode == "GLOBAL", of_x += r.tensor == "x";
      EXPECT_EQ(of_x, 5) << reduction << " abs " << abs;
      EXPECT_EQ(global, 1 + (abs == 0 || reduction == "min"))  // x's, and w's where its red_mask has the kind
          << reduction << " abs " << abs;
    }
  }
  EXPECT_EQ(kinds_seen, 18);
}

TEST(ReductionLines, AnotherDatabasesTrialIsNotFound) {
  TempDir dir;
  Database db(dir / "t.db");
  register_reduction_row_function(db.handle());
  fill(db);
  std::vector<std::string> modes;
  int rows = 0;
  EXPECT_FALSE(read_reduction_lines(db.handle(), "main", "c", kTensors, "mean", false,
                                    std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max(), &modes,
                                    [&](const ReductionRow&) { ++rows; }));
  EXPECT_EQ(rows, 0);
}

TEST(ReductionLines, TheRowFunctionFailsOutsideTheRead) {
  TempDir dir;
  Database db(dir / "t.db");
  register_reduction_row_function(db.handle());
  fill(db);
  try {
    Statement q(db.handle(), std::string("SELECT ") + kRowFunction + "(NULL, 1, 0, 2.5)");
    q.step();
    FAIL() << "the row function answered without a sink";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("trialdb serve's own"), std::string::npos) << e.what();
  }
}

}  // namespace
