// trialdb plot: charts of trials as PNG or SVG files (format from the --out extension).
//
//   distribution  a histogram of one tensor's elements per step, as a heat map (x = step,
//                 y = value, colour = elements per bin): the animated histograms of
//                 SageMaker Debugger's tensor analysis notebook as one image. Several --trial
//                 give stacked panels. (src/plot_distribution.cc)
//   percentiles   bands of a tensor's percentiles over steps, TensorBoard's "distributions".
//                 (src/plot_distribution.cc)
//   reduction     a reduction (l2, mean, ...) over steps for the tensors matching a regex in
//                 one or more trials, on one chart with a legend.
//   findings      a timeline of rule findings (view rule_findings), one row per rule.
//
// These files read the database and shape the data; src/plot/ draws it.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "schema/database.h"
#include "schema/py_regex.h"
#include "src/commands.h"
#include "src/output.h"
#include "src/open_db.h"
#include "src/plot/chart.h"
#include "src/plot_args.h"

namespace trialdb::cli {

extern const char* const kReductionRowsSql;  // src/cmd_compare.cc

std::string step_title(const PlotArgs& a) { return a.mode.empty() ? "global step" : a.mode + " step"; }

namespace {

using plot::ImageSize;
using plot::LegendEntry;

std::unique_ptr<PyRegex> compile_or_throw(const std::string& pattern, const char* option) {
  std::unique_ptr<PyRegex> re;
  Status st = PyRegex::compile(pattern, &re);
  if (!st.is_ok()) throw Error(Status::usage(std::string(option) + ": " + st.cause()));
  return re;
}

// ---------------------------------------------------------------------------------------------
// reduction

void plot_reduction(const PlotArgs& a) {
  if (a.tensor_regex.empty()) throw Error(ErrorKind::kUsage, "reduction: give --tensor REGEX (e.g. '^gradient/')");
  auto re = compile_or_throw(a.tensor_regex, "--tensor");
  auto db = open_db(a.db, OpenMode::kReadOnly);
  std::vector<std::string> trials = a.trials.empty() ? all_trials(*db) : a.trials;
  require_trials(*db, trials);
  if (trials.empty()) throw Error(ErrorKind::kInvalidInput, a.db + " has no trials");

  struct Points {
    std::vector<double> x, y;
  };
  // (trial, tensor, worker) -> points in step order
  std::map<std::tuple<size_t, std::string, std::string>, Points> series;
  std::set<std::string> tensors, workers;
  Statement q(db->handle(), kReductionRowsSql);  // tensor, mode, mode_step, step, worker, value
  std::map<std::string, bool> wanted;
  for (size_t ti = 0; ti < trials.size(); ti++) {
    q.reset();
    q.bind(1, trials[ti]).bind(2, a.reduction).bind(3, a.abs ? 1 : 0).bind(4, a.mode);
    while (q.step()) {
      std::string tensor = q.text(0);
      auto it = wanted.find(tensor);
      if (it == wanted.end()) it = wanted.emplace(tensor, re->search(tensor)).first;
      if (!it->second) continue;
      std::string worker = q.text(4);
      if (!a.worker.empty() && worker != a.worker) continue;
      Points& p = series[{ti, tensor, worker}];
      p.x.push_back(static_cast<double>(a.mode.empty() ? q.int64(3) : q.int64(2)));
      p.y.push_back(q.is_null(5) ? NAN : q.real(5));
      tensors.insert(tensor);
      workers.insert(worker);
    }
  }
  if (series.empty())
    throw Error(ErrorKind::kInvalidInput, "no " + a.reduction + " values for tensors matching '" + a.tensor_regex + "'" +
                                          (a.mode.empty() ? "" : " in mode " + a.mode) + " in trial(s) given");
  if (tensors.size() > 40)
    throw Error(ErrorKind::kUsage, "--tensor '" + a.tensor_regex + "' matches " + std::to_string(tensors.size()) +
                                       " tensors; narrow it to 40 or fewer so the chart stays readable");

  // Colour tells tensors apart and line style tells trials apart; with a single tensor, colour
  // goes to the trials instead. Several workers get one line each, labelled with the worker.
  std::vector<std::string> tensor_list(tensors.begin(), tensors.end());
  bool color_by_trial = tensor_list.size() == 1 && trials.size() > 1;
  bool show_worker = workers.size() > 1;
  // One trial, several workers: line style tells the workers apart instead of the trials.
  bool dash_by_worker = show_worker && trials.size() == 1;
  std::vector<std::string> worker_list(workers.begin(), workers.end());
  std::string red = a.reduction + (a.abs ? " of |x|" : "");
  plot::LineChart chart;
  chart.title = a.title.empty() ? red + " of " +
                                      (tensor_list.size() == 1 ? tensor_list[0] : "tensors matching '" + a.tensor_regex + "'") +
                                      (trials.size() == 1 ? " in " + trials[0] : "")
                                : a.title;
  chart.x_title = step_title(a);
  chart.y_title = red + (a.log_y ? " (log scale)" : "");
  chart.log_y = a.log_y;
  for (auto& [key, pts] : series) {
    const auto& [ti, tensor, worker] = key;
    size_t tensor_index = std::find(tensor_list.begin(), tensor_list.end(), tensor) - tensor_list.begin();
    plot::LineSeries s;
    s.x = std::move(pts.x);
    s.y = std::move(pts.y);
    s.color = plot::palette(static_cast<int>(color_by_trial ? ti : tensor_index));
    s.dash = dash_by_worker ? static_cast<int>((std::find(worker_list.begin(), worker_list.end(), worker) -
                                               worker_list.begin()) % 3)
             : color_by_trial ? 0
                              : static_cast<int>(ti % 3);
    s.label = tensor + (show_worker ? " (" + worker + ")" : "");
    chart.series.push_back(std::move(s));
  }
  if (color_by_trial) {
    chart.legend.push_back({"trial", {}, 0, LegendEntry::Line, true});
    for (size_t ti = 0; ti < trials.size(); ti++) chart.legend.push_back({trials[ti], plot::palette(ti), 0});
  } else {
    if (trials.size() > 1 || tensor_list.size() > 1)
      chart.legend.push_back({"tensor", {}, 0, LegendEntry::Line, true});
    for (size_t i = 0; i < tensor_list.size(); i++)
      chart.legend.push_back({tensor_list[i], plot::palette(static_cast<int>(i)), 0});
    if (trials.size() > 1) {
      chart.legend.push_back({"trial", {}, 0, LegendEntry::Line, true});
      for (size_t ti = 0; ti < trials.size(); ti++)
        chart.legend.push_back({trials[ti], {0.25, 0.25, 0.25}, static_cast<int>(ti % 3)});
    }
  }
  if (dash_by_worker) {
    chart.legend.push_back({"worker", {}, 0, LegendEntry::Line, true});
    for (size_t wi = 0; wi < worker_list.size(); wi++)
      chart.legend.push_back({worker_list[wi], {0.25, 0.25, 0.25}, static_cast<int>(wi % 3)});
  } else if (show_worker) {
    chart.legend.push_back({"one line per worker", {}, 0, LegendEntry::Line, true});
  }
  plot::render_line_chart(chart, a.out, {a.width, a.height ? a.height : 540});
}

// ---------------------------------------------------------------------------------------------
// findings

void plot_findings(const PlotArgs& a) {
  auto db = open_db(a.db, OpenMode::kReadOnly);
  {
    Statement v(db->handle(), "SELECT 1 FROM sqlite_master WHERE name = 'rule_findings' AND type IN ('view', 'table')");
    if (!v.step())
      throw Error(ErrorKind::kInvalidInput, a.db + " has no rule_findings view: run the rules first (trialdb rules --db " + a.db +
                                            ")");
  }
  std::unique_ptr<PyRegex> rule_re;
  if (!a.rule_regex.empty()) rule_re = compile_or_throw(a.rule_regex, "--rule");
  std::vector<std::string> trials = a.trials.empty() ? all_trials(*db) : a.trials;
  require_trials(*db, trials);

  plot::Timeline t;
  std::map<std::string, int> row_of;         // row label -> row
  std::map<std::string, int> rule_color;     // rule -> palette index
  std::map<std::pair<int, int64_t>, int> n;  // (row, step) -> findings
  std::map<std::pair<int, int64_t>, std::string> rule_at;
  std::vector<std::string> row_labels;
  Statement q(db->handle(), R"(
    SELECT rule, step, mode_step, tensor
    FROM rule_findings
    WHERE trial = ?1 AND (?2 = '' OR mode = ?2)
    ORDER BY rule, tensor, step)");
  double lo = INFINITY, hi = -INFINITY;
  for (const std::string& trial : trials) {
    q.reset();
    q.bind(1, trial).bind(2, a.mode);
    while (q.step()) {
      std::string rule = q.text(0);
      if (rule_re && !rule_re->search(rule)) continue;
      std::string label = (trials.size() > 1 ? trial + ": " : "") + rule + (a.by_tensor ? " · " + q.text(3) : "");
      auto it = row_of.find(label);
      if (it == row_of.end()) {
        it = row_of.emplace(label, static_cast<int>(row_labels.size())).first;
        row_labels.push_back(label);
      }
      if (!rule_color.count(rule)) rule_color.emplace(rule, static_cast<int>(rule_color.size()));
      int64_t x = a.mode.empty() ? q.int64(1) : q.int64(2);
      n[{it->second, x}]++;
      rule_at[{it->second, x}] = rule;
    }
    // The step range of the whole run, so the timeline also shows where nothing fired.
    Statement s(db->handle(), R"(
      SELECT min(CASE WHEN ?2 = '' THEN step ELSE mode_step END),
             max(CASE WHEN ?2 = '' THEN step ELSE mode_step END)
      FROM steps WHERE trial = ?1 AND (?2 = '' OR mode = ?2))");
    s.bind(1, trial).bind(2, a.mode);
    if (s.step() && !s.is_null(0)) {
      lo = std::min(lo, s.real(0));
      hi = std::max(hi, s.real(1));
    }
  }
  for (const auto& [key, count] : n)
    t.marks.push_back({key.first, static_cast<double>(key.second), count,
                       plot::palette(rule_color[rule_at[key]])});
  t.rows = row_labels;
  t.x_lo = std::isfinite(lo) ? lo : 0;
  t.x_hi = std::isfinite(hi) ? hi : 1;
  t.x_title = step_title(a);
  size_t total = 0;
  for (const auto& [key, count] : n) total += count;
  t.title = a.title.empty() ? "rule findings" + (trials.size() == 1 ? ": " + trials[0] : "") + " (" +
                                  std::to_string(total) + ")"
                            : a.title;
  if (a.by_tensor || trials.size() > 1) {
    for (const auto& [rule, ci] : rule_color) t.legend.push_back({rule, plot::palette(ci), 0, LegendEntry::Marker});
  }
  t.legend.push_back({"bigger: more findings", {}, 0, LegendEntry::Line, true});
  int h = a.height ? a.height : std::clamp(140 + 34 * static_cast<int>(std::max<size_t>(row_labels.size(), 1)), 380, 1600);
  plot::render_timeline(t, a.out, {a.width, h});
}

}  // namespace

void add_plot(CLI::App& app) {
  auto args = std::make_shared<PlotArgs>();
  CLI::App* cmd = app.add_subcommand(
      "plot",
      "Draw a chart of trials into a PNG or SVG file (the --out extension chooses).\n"
      "Examples:\n"
      "  trialdb plot --db trials.db --out grad.png distribution --trial pt_bad_init --trial pt_good_init "
      "--tensor gradient/Net_conv1.weight --mode TRAIN\n"
      "  trialdb plot --db trials.db --out w.png percentiles --trial pt_bad_init --tensor Net_conv1.weight\n"
      "  trialdb plot --db trials.db --out l2.svg reduction --trial pt_bad_init --trial pt_good_init "
      "--tensor '^gradient/.*weight' --reduction l2 --log\n"
      "  trialdb plot --db trials.db --out findings.png findings --trial pt_bad_init");
  cmd->require_subcommand(1);
  cmd->fallthrough();  // --db/--out/--width/... may also come after the chart kind
  cmd->add_option("--db", args->db, "Database file")->required();
  cmd->add_option("--out", args->out, "Image file to write: NAME.png or NAME.svg")->required();
  cmd->add_option("--width", args->width, "Image width in pixels (default 900)")->check(CLI::Range(100, 20000));
  cmd->add_option("--height", args->height, "Image height in pixels (default: suits the chart)")
      ->check(CLI::Range(100, 20000));
  cmd->add_option("--title", args->title, "Chart title (default: says what is shown)");

  auto add_mode = [&](CLI::App* sub) {
    sub->add_option("--mode", args->mode, "Only steps of this mode; x is then the mode step (default: all, x = global step)")
        ->transform(CLI::IsMember({"TRAIN", "EVAL", "PREDICT", "GLOBAL"}, CLI::ignore_case));
  };

  CLI::App* dist = cmd->add_subcommand(
      "distribution",
      "Histogram of one tensor's elements at every step, as a heat map (x = step, y = value, "
      "colour = elements per bin). One panel per --trial.");
  dist->add_option("--trial", args->trials, "Trial (repeat for stacked panels)")->required();
  dist->add_option("--tensor", args->tensor, "Tensor name (exact)")->required();
  add_mode(dist);
  dist->add_option("--worker", args->worker, "Only this worker (default: workers pooled)");
  dist->add_option("--bins", args->bins, "Value bins (default 50)");
  dist->add_option("--range", args->range, "Value range LO HI (default: min to max over all steps)")->expected(2);
  dist->add_flag("--linear-color", args->linear_color, "Colour by count, not log(count)");

  CLI::App* pct = cmd->add_subcommand(
      "percentiles",
      "Bands of one tensor's percentiles over steps (p0-p100, p1-p99, p5-p95, p10-p90, p25-p75) and its "
      "median, from the distributions computed at ingest (TensorBoard's distributions chart).");
  pct->add_option("--trial", args->trials, "Trial")->required();
  pct->add_option("--tensor", args->tensor, "Tensor name (exact)")->required();
  add_mode(pct);
  pct->add_option("--worker", args->worker, "Only this worker (default: workers merged)");

  CLI::App* red = cmd->add_subcommand(
      "reduction", "A reduction over steps for the tensors matching --tensor, in one or more trials.");
  red->add_option("--trial", args->trials, "Trial (repeatable; default: every trial)");
  red->add_option("--tensor", args->tensor_regex, "Regex of tensor names (Python re.search)")->required();
  red->add_option("--reduction", args->reduction, "min, max, mean, prod, std, variance, sum, l1 or l2 (default l2)")
      ->check(CLI::IsMember({"min", "max", "mean", "prod", "std", "variance", "sum", "l1", "l2"}));
  red->add_flag("--abs", args->abs, "The reduction of |x|");
  red->add_flag("--log", args->log_y, "Logarithmic y axis");
  add_mode(red);
  red->add_option("--worker", args->worker, "Only this worker (default: one line per worker)");

  CLI::App* fnd = cmd->add_subcommand("findings", "Timeline of rule findings (view rule_findings), one row per rule.");
  fnd->add_option("--trial", args->trials, "Trial (repeatable; default: every trial)");
  fnd->add_option("--rule", args->rule_regex, "Only rules matching this regex");
  fnd->add_flag("--by-tensor", args->by_tensor, "One row per rule and tensor");
  add_mode(fnd);

  cmd->callback([args, dist, pct, red, fnd] {
    try {
      if (dist->parsed()) plot_distribution(*args);
      else if (pct->parsed()) plot_percentiles(*args);
      else if (red->parsed()) plot_reduction(*args);
      else if (fnd->parsed()) plot_findings(*args);
      std::cerr << "wrote " << printable(args->out) << "\n";
      exit_code() = kExitOk;
    } catch (const Error& e) {
      std::cerr << "trialdb plot: " << printable(e.what()) << "\n";
      exit_code() = e.kind() == ErrorKind::kUsage ? kExitUsage : kExitError;
    } catch (const std::exception& e) {
      std::cerr << "trialdb plot: " << printable(e.what()) << "\n";
      exit_code() = kExitError;
    }
  });
}

}  // namespace trialdb::cli
