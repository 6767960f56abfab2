// trialdb compare: one reduction of every tensor, side by side in two trials, with the ratio.
//
// Rows are aligned by (tensor, mode, mode step, worker), not by global step: two runs with
// different save intervals or different numbers of EVAL steps between TRAIN steps still line up
// (TRAIN step 10 of A next to TRAIN step 10 of B, whatever their global steps are). By default
// only keys present in both trials are shown; --all adds those present in one trial only, with
// the other side blank. The ratio is B / A: A is the baseline; 0/0 and NaN give nan, x/0 gives
// inf (in JSON "NaN" and "Infinity", output.h). step_a/step_b are each value's step as in the reductions view (the
// global step; for GLOBAL-mode steps smdebug's tensor step, which is the mode step).
//
// Data comes from the public views `reductions` and `steps` (see kReductionRowsSql).
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "schema/database.h"
#include "schema/py_regex.h"
#include "src/commands.h"
#include "src/open_db.h"
#include "src/output.h"

namespace trialdb::cli {

namespace {

struct CompareArgs {
  std::string db;
  std::string trial_a, trial_b;
  std::string tensor_regex;
  std::string reduction = "l2";
  bool abs = false;
  std::string mode;
  bool all = false;
  bool csv = false, json = false;
};

struct Key {
  std::string tensor, mode;
  int64_t mode_step;
  std::string worker;
  bool operator<(const Key& o) const {
    return std::tie(tensor, mode, mode_step, worker) < std::tie(o.tensor, o.mode, o.mode_step, o.worker);
  }
};

struct Side {
  bool present = false;
  int64_t step = 0;  // global step (smdebug tensor step)
  double value = 0;  // NaN when the reduction is NaN
};

struct Row {
  Side a, b;
};

}  // namespace

// One reduction of every value of a trial with its mode and mode step, from the public views.
// reductions.step is smdebug's tensor step: the global step, except for GLOBAL-mode steps, which
// smdebug files under their mode step. So a value whose step is a non-GLOBAL global step takes
// that step's mode; any other is a GLOBAL-mode value whose mode step is its step. (Joining
// tensor_values instead is exact in the corner case where a GLOBAL mode step equals another
// mode's global step, which smdebug's own API cannot tell apart either, but it is two orders of
// magnitude slower.) Shared with `trialdb plot reduction`.
extern const char* const kReductionRowsSql = R"(
    SELECT r.tensor, coalesce(s.mode, 'GLOBAL') AS mode, coalesce(s.mode_step, r.step) AS mode_step,
           r.step, r.worker, r.value
    FROM reductions r
    LEFT JOIN steps s ON s.trial = r.trial AND s.step = r.step AND s.mode <> 'GLOBAL'
    WHERE r.trial = ?1 AND r.reduction = ?2 AND r.abs = ?3
      AND (?4 = '' OR coalesce(s.mode, 'GLOBAL') = ?4)
    ORDER BY r.tensor, r.worker, r.step)";

namespace {

std::string number(double v, bool short_form) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  if (short_form) {
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.6g", v);
    return buf;
  }
  return shortest_real(v);
}

double ratio(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return NAN;
  if (a == 0) return b == 0 ? NAN : (b > 0 ? INFINITY : -INFINITY);
  return b / a;
}

void require_trial(Database& db, const std::string& name) {
  Statement q(db.handle(), "SELECT 1 FROM trials WHERE trial = ?1");
  q.bind(1, name);
  if (q.step()) return;
  std::string known;
  Statement all(db.handle(), "SELECT trial FROM trials ORDER BY trial");
  while (all.step()) known += (known.empty() ? "" : ", ") + all.text(0);
  throw Error(ErrorKind::kInvalidInput, "no trial named '" + name + "' in " + db.path() +
                                            (known.empty() ? " (it has no trials)" : " (trials: " + known + ")"));
}

void load_side(Database& db, const CompareArgs& a, const std::string& trial, const PyRegex* re, bool is_a,
               std::map<Key, Row>* rows) {
  Statement q(db.handle(), kReductionRowsSql);
  q.bind(1, trial).bind(2, a.reduction).bind(3, a.abs ? 1 : 0).bind(4, a.mode);
  std::map<std::string, bool> wanted;  // regex verdict per tensor name
  while (q.step()) {
    std::string tensor = q.text(0);
    if (re) {
      auto it = wanted.find(tensor);
      if (it == wanted.end()) it = wanted.emplace(tensor, re->search(tensor)).first;
      if (!it->second) continue;
    }
    Key k{tensor, q.text(1), q.int64(2), q.text(4)};
    Side s{true, q.int64(3), q.is_null(5) ? NAN : q.real(5)};  // SQLite keeps NaN as NULL
    Row& r = (*rows)[k];
    (is_a ? r.a : r.b) = s;
  }
}

void run_compare(const CompareArgs& a) {
  std::unique_ptr<PyRegex> re;
  if (!a.tensor_regex.empty()) {
    Status st = PyRegex::compile(a.tensor_regex, &re);
    if (!st.is_ok()) throw Error(Status::usage("--tensor: " + st.cause()));
  }
  auto db = open_db(a.db, OpenMode::kReadOnly);
  require_trial(*db, a.trial_a);
  require_trial(*db, a.trial_b);
  std::map<Key, Row> rows;
  load_side(*db, a, a.trial_a, re.get(), true, &rows);
  load_side(*db, a, a.trial_b, re.get(), false, &rows);

  Format fmt = a.csv ? Format::kCsv : a.json ? Format::kJson : Format::kTable;
  bool table = fmt == Format::kTable;
  std::string red = a.reduction + (a.abs ? "_abs" : "");
  if (fmt == Format::kJson) {
    nlohmann::ordered_json out = nlohmann::ordered_json::array();
    for (const auto& [k, r] : rows) {
      if (!a.all && !(r.a.present && r.b.present)) continue;
      nlohmann::ordered_json o;
      o["tensor"] = k.tensor;
      o["mode"] = k.mode;
      o["mode_step"] = k.mode_step;
      o["worker"] = k.worker;
      o["reduction"] = red;
      o["step_a"] = r.a.present ? nlohmann::ordered_json(r.a.step) : nlohmann::ordered_json(nullptr);
      // A NaN reduction (stored as NULL) is "NaN"; a side that is missing is null.
      o["value_a"] = r.a.present ? json_number(r.a.value) : nullptr;
      o["step_b"] = r.b.present ? nlohmann::ordered_json(r.b.step) : nlohmann::ordered_json(nullptr);
      o["value_b"] = r.b.present ? json_number(r.b.value) : nullptr;
      o["ratio_b_a"] = r.a.present && r.b.present ? json_number(ratio(r.a.value, r.b.value)) : nullptr;
      out.push_back(std::move(o));
    }
    std::cout << json_text(out) << "\n";
    return;
  }

  Table t;
  t.columns = {"tensor", "mode", "mode_step", "worker", "step_a", "value_a", "step_b", "value_b", "ratio_b_a"};
  t.numeric = {false, false, true, false, true, true, true, true, true};
  // Missing side: blank in CSV, "-" in the table (NULL would read as a NaN reduction).
  const std::string missing = table ? "-" : "";
  for (const auto& [k, r] : rows) {
    if (!a.all && !(r.a.present && r.b.present)) continue;
    auto side = [&](const Side& s, std::vector<std::string>* cells) {
      cells->push_back(s.present ? std::to_string(s.step) : missing);
      cells->push_back(s.present ? number(s.value, table) : missing);
    };
    std::vector<std::string> cells = {k.tensor, k.mode, std::to_string(k.mode_step), k.worker};
    side(r.a, &cells);
    side(r.b, &cells);
    cells.push_back(r.a.present && r.b.present ? number(ratio(r.a.value, r.b.value), table) : missing);
    t.rows.push_back(std::move(cells));
  }
  if (table) {
    std::cout << "A = " << printable(a.trial_a) << ", B = " << printable(a.trial_b) << ", reduction " << red
              << (a.mode.empty() ? "" : ", mode " + a.mode) << ", aligned by mode step"
              << (a.all ? "" : " (steps in both trials)") << "\n";
    if (t.rows.empty()) {
      std::cout << "(no matching rows)\n";
      return;
    }
  }
  print_table(t, fmt, std::cout);
}

}  // namespace

void add_compare(CLI::App& app) {
  auto args = std::make_shared<CompareArgs>();
  CLI::App* cmd =
      app.add_subcommand("compare",
                         "Compare two trials: one reduction per tensor and step, side by side, with the ratio B/A.\n"
                         "Steps are aligned by mode and mode step (TRAIN step 10 of A next to TRAIN step 10 of B),\n"
                         "so trials saved at different intervals line up; only steps saved in both are shown\n"
                         "unless --all is given.\n"
                         "Example: trialdb compare --db trials.db pt_bad_init pt_good_init --tensor '^gradient/' "
                         "--reduction l2 --mode TRAIN");
  cmd->add_option("--db", args->db, "Database file")->required();
  cmd->add_option("TRIAL_A", args->trial_a, "Baseline trial (the ratio's denominator)")->required();
  cmd->add_option("TRIAL_B", args->trial_b, "Trial compared with A")->required();
  cmd->add_option("--tensor", args->tensor_regex, "Only tensors whose name matches this regex (Python re.search)");
  cmd->add_option("--reduction", args->reduction, "Reduction to compare (default l2)")
      ->check(CLI::IsMember({"min", "max", "mean", "prod", "std", "variance", "sum", "l1", "l2"}));
  cmd->add_flag("--abs", args->abs, "Use the reduction of |x| (e.g. mean of absolute values)");
  cmd->add_option("--mode", args->mode, "Only steps of this mode: TRAIN, EVAL, PREDICT or GLOBAL")
      ->transform(CLI::IsMember({"TRAIN", "EVAL", "PREDICT", "GLOBAL"}, CLI::ignore_case));
  cmd->add_flag("--all", args->all, "Also show steps saved in only one of the trials (other side blank)");
  auto* csv = cmd->add_flag("--csv", args->csv, "Print CSV");
  auto* json = cmd->add_flag("--json", args->json, "Print a JSON array of objects");
  csv->excludes(json);
  cmd->callback([args] {
    try {
      run_compare(*args);
      exit_code() = kExitOk;
    } catch (const Error& e) {
      std::cerr << "trialdb compare: " << printable(e.what()) << "\n";
      exit_code() = e.kind() == ErrorKind::kUsage ? kExitUsage : kExitError;
    } catch (const std::exception& e) {
      std::cerr << "trialdb compare: " << printable(e.what()) << "\n";
      exit_code() = kExitError;
    }
  });
}

}  // namespace trialdb::cli
