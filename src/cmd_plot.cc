// trialdb plot: charts of trials as PNG or SVG files (format from the --out extension).
//
//   distribution  a histogram of one tensor's elements per step, as a heat map (x = step,
//                 y = value, colour = elements per bin): the animated histograms of
//                 SageMaker Debugger's tensor analysis notebook as one image. Several --trial
//                 give stacked panels. (src/plot_distribution.cc)
//   percentiles   bands of a tensor's percentiles over steps, TensorBoard's "distributions".
//                 (src/plot_distribution.cc)
//   reduction     a reduction (l2, mean, ...) over steps for the tensors matching a regex in
//                 one or more trials, on one chart with a legend. (src/plot_reduction.cc)
//   histogram     one step's histogram of a tensor, or several steps overlaid or offset
//                 (TensorBoard's histograms). (src/plot_distribution.cc)
//   findings      a timeline of rule findings (view rule_findings), one row per rule.
//
// Every chart takes --steps A:B; the line charts --log or --symlog and --max-points (drawing only:
// each stretch of x keeps its first, last, lowest and highest point); reduction --smooth.
//
// These files read the database and shape the data; src/plot/ draws it.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "schema/database.h"
#include "schema/py_regex.h"
#include "ingest/pipeline/selection.h"
#include "src/commands.h"
#include "src/output.h"
#include "src/open_db.h"
#include "src/plot/chart.h"
#include "src/plot_args.h"

namespace trialdb::cli {

std::string step_title(const PlotArgs& a) { return a.mode.empty() ? "global step" : a.mode + " step"; }

void check_common_options(PlotArgs& a) {
  if (!a.steps.empty()) {
    SelectionSpec range;
    const Status st = parse_step_range(a.steps, &range);
    if (!st.is_ok()) throw Error(st);
    if (range.first_step) a.step_lo = *range.first_step;
    if (range.end_step) a.step_hi = *range.end_step;
  }
  if (a.log_y && a.symlog_y) throw Error(ErrorKind::kUsage, "--log and --symlog: choose one");
  if (!(a.smooth >= 0 && a.smooth < 1)) throw Error(ErrorKind::kUsage, "--smooth must be at least 0 and below 1");
  if (a.max_points != 0 && a.max_points < 16) throw Error(ErrorKind::kUsage, "--max-points must be at least 16");
}

bool in_step_range(const PlotArgs& a, int64_t x) { return x >= a.step_lo && x < a.step_hi; }

std::unique_ptr<PyRegex> compile_or_throw(const std::string& pattern, const char* option) {
  std::unique_ptr<PyRegex> re;
  Status st = PyRegex::compile(pattern, &re);
  if (!st.is_ok()) throw Error(Status::usage(std::string(option) + ": " + st.cause()));
  return re;
}

namespace {

using plot::LegendEntry;

// ---------------------------------------------------------------------------------------------
// findings

void plot_findings(const PlotArgs& a) {
  auto db = open_db(a.db, OpenMode::kReadOnly);
  {
    Statement v(db->handle(), "SELECT 1 FROM sqlite_master WHERE name = 'rule_findings' AND type IN ('view', 'table')");
    if (!v.step())
      throw Error(ErrorKind::kInvalidInput,
                  a.db + " has no rule_findings view: run the rules first (trialdb rules --db " + a.db + ")");
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
      if (!in_step_range(a, a.mode.empty() ? q.int64(1) : q.int64(2))) continue;
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
      lo = std::min(lo, std::max(s.real(0), static_cast<double>(a.step_lo)));
      hi = std::min(std::max(hi, s.real(1)), static_cast<double>(a.step_hi) - 1);
    }
  }
  if (n.empty())
    throw Error(ErrorKind::kInvalidInput,
                "nothing to draw: no rule findings in trial" + std::string(trials.size() == 1 ? " " : "s ") +
                    join(trials, ", ") + (a.rule_regex.empty() ? "" : " for rules matching '" + a.rule_regex + "'") +
                    (a.mode.empty() ? "" : " in mode " + a.mode) +
                    " (what the rules have evaluated: trialdb rules --db " + a.db +
                    " --summary; evaluate them with: trialdb rules --db " + a.db + ")");
  for (const auto& [key, count] : n)
    t.marks.push_back({key.first, static_cast<double>(key.second), count, plot::palette(rule_color[rule_at[key]])});
  t.rows = row_labels;
  t.x_lo = std::isfinite(lo) ? lo : 0;
  t.x_hi = std::isfinite(hi) ? hi : 1;
  t.x_title = step_title(a);
  size_t total = 0;
  for (const auto& [key, count] : n) total += count;
  t.title = a.title.empty()
                ? "rule findings" + (trials.size() == 1 ? ": " + trials[0] : "") + " (" + std::to_string(total) + ")"
                : a.title;
  if (a.by_tensor || trials.size() > 1) {
    for (const auto& [rule, ci] : rule_color)
      t.legend.push_back({rule, plot::palette(ci), plot::Dash::Solid, LegendEntry::Point});
  }
  t.legend.push_back({"bigger: more findings", {}, plot::Dash::Solid, LegendEntry::Line, true});
  int h =
      a.height ? a.height : std::clamp(140 + 34 * static_cast<int>(std::max<size_t>(row_labels.size(), 1)), 380, 1600);
  plot::render_timeline(t, a.out, {a.width, h, a.height == 0});
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
      "  trialdb plot --db trials.db --out loss.png reduction --trial pt_bad_init --tensor CrossEntropyLoss_output_0 "
      "--reduction mean --by-mode\n"
      "  trialdb plot --db trials.db --out loss.png reduction --tensor Loss --reduction mean --smooth 0.9 --steps "
      "100:\n"
      "  trialdb plot --db trials.db --out h.png histogram --trial pt_bad_init --tensor relu0_output_0 --step 0 --step "
      "20\n"
      "  trialdb plot --db trials.db --out findings.png findings --trial pt_bad_init");
  // The chart kind is checked in the callback, so a missing or unknown one is named with the
  // kinds there are.
  cmd->require_subcommand(0, 1);
  cmd->allow_extras();
  cmd->fallthrough();  // --db/--out/--width/... may also come after the chart kind
  cmd->add_option("--db", args->db, "Database file")->required();
  cmd->add_option("--out", args->out, "Image file to write: NAME.png or NAME.svg")->required();
  cmd->add_option("--width", args->width, "Image width in pixels (default 900)")->check(CLI::Range(100, 20000));
  cmd->add_option("--height", args->height, "Image height in pixels (default: suits the chart)")
      ->check(CLI::Range(100, 20000));
  cmd->add_option("--title", args->title, "Chart title (default: says what is shown)");

  const auto modes = CLI::IsMember({"TRAIN", "EVAL", "PREDICT", "GLOBAL"}, CLI::ignore_case);
  auto add_mode = [&](CLI::App* sub) {
    sub->add_option("--mode", args->mode,
                    "Only steps of this mode; x is then the mode step (default: all, x = global step)")
        ->transform(modes);
  };
  auto add_steps = [&](CLI::App* sub) {
    sub->add_option("--steps", args->steps, "Only steps A <= step < B of the x axis (A:B, A: or :B)");
  };
  auto add_y_scale = [&](CLI::App* sub) {
    sub->add_flag("--log", args->log_y, "Logarithmic y axis (non-positive values left out)");
    sub->add_flag("--symlog", args->symlog_y, "Symmetric log y axis: log beyond a small threshold, linear through 0");
    sub->add_option("--max-points", args->max_points,
                    "Draw at most about N points per line, keeping each stretch's first, last, lowest and highest");
  };

  CLI::App* dist =
      cmd->add_subcommand("distribution",
                          "Histogram of one tensor's elements at every step, as a heat map (x = step, y = value, "
                          "colour = elements per bin). One panel per --trial.");
  dist->add_option("--trial", args->trials, "Trial (repeat for stacked panels)")->required();
  dist->add_option("--tensor", args->tensor, "Tensor name (exact)")->required();
  add_mode(dist);
  dist->add_option("--worker", args->worker, "Only this worker (default: workers pooled)");
  dist->add_option("--bins", args->bins, "Value bins (default 50)");
  dist->add_option("--range", args->range, "Value range LO HI (default: min to max over all steps)")->expected(2);
  dist->add_flag("--linear-color", args->linear_color, "Colour by count, not log(count)");
  dist->add_flag("--shared-scale", args->shared_scale,
                 "Every panel with the same value bins and one colour scale, so colours compare across trials "
                 "(default: each panel its own range and colour bar)");
  add_steps(dist);

  CLI::App* pct = cmd->add_subcommand(
      "percentiles",
      "Bands of one tensor's percentiles over steps (p0-p100, p1-p99, p5-p95, p10-p90, p25-p75) and its "
      "median, from the distributions computed at ingest (TensorBoard's distributions chart).");
  pct->add_option("--trial", args->trials, "Trial")->required();
  pct->add_option("--tensor", args->tensor, "Tensor name (exact)")->required();
  add_mode(pct);
  pct->add_option("--worker", args->worker, "Only this worker (default: workers merged)");
  add_steps(pct);
  add_y_scale(pct);

  CLI::App* hist = cmd->add_subcommand(
      "histogram",
      "One step's histogram of a tensor's elements (x = value, y = elements per bin), or several steps "
      "overlaid (--step repeated) or offset one above the other (--offset), from the histograms computed at "
      "ingest (TensorBoard's histograms).");
  hist->add_option("--trial", args->trials, "Trial")->required();
  hist->add_option("--tensor", args->tensor, "Tensor name (exact)")->required();
  hist->add_option("--step", args->hist_steps, "A step to draw (repeatable; default: the last step)");
  add_mode(hist);
  hist->add_option("--worker", args->worker, "Only this worker (default: workers pooled)");
  hist->add_option("--bins", args->bins, "Value bins (default 50)");
  hist->add_option("--range", args->range, "Value range LO HI (default: min to max over the steps drawn)")->expected(2);
  hist->add_flag("--offset", args->offset, "Each later step drawn above the one before (TensorBoard's offset view)");
  add_steps(hist);
  add_y_scale(hist);

  CLI::App* red = cmd->add_subcommand(
      "reduction", "A reduction over steps for the tensors matching --tensor, in one or more trials.");
  red->add_option("--trial", args->trials, "Trial (repeatable; default: every trial)");
  red->add_option("--tensor", args->tensor_regex, "Regex of tensor names (Python re.search)")->required();
  red->add_option("--reduction", args->reduction, "min, max, mean, prod, std, variance, sum, l1 or l2 (default l2)")
      ->check(CLI::IsMember({"min", "max", "mean", "prod", "std", "variance", "sum", "l1", "l2"}));
  red->add_flag("--abs", args->abs, "The reduction of |x|");
  add_y_scale(red);
  add_steps(red);
  red->add_option("--smooth", args->smooth,
                  "TensorBoard's smoothing (an exponential moving average, 0 <= W < 1; the raw line stays, faint)");
  red->add_option("--mode", args->modes,
                  "Only steps of this mode (repeatable: a line per mode, x = global step; one mode: x = its mode step)")
      ->transform(modes);
  red->add_flag("--by-mode", args->by_mode, "A line per mode (TRAIN and EVAL apart), x = global step");
  red->add_option("--worker", args->worker, "Only this worker (default: one line per worker)");

  CLI::App* fnd = cmd->add_subcommand("findings", "Timeline of rule findings (view rule_findings), one row per rule.");
  fnd->add_option("--trial", args->trials, "Trial (repeatable; default: every trial)");
  fnd->add_option("--rule", args->rule_regex, "Only rules matching this regex");
  fnd->add_flag("--by-tensor", args->by_tensor, "One row per rule and tensor");
  add_mode(fnd);
  add_steps(fnd);

  // The kinds inherited fallthrough (their parent options may follow them); plot itself keeps
  // what no kind took, so an unknown kind reaches the callback, which names the kinds.
  cmd->fallthrough(false);
  cmd->callback([cmd, args, dist, pct, hist, red, fnd] {
    try {
      static const char* const kKinds = "distribution, percentiles, histogram, reduction or findings";
      if (!cmd->remaining().empty())
        throw Error(ErrorKind::kUsage,
                    "not a chart kind or option: '" + cmd->remaining().front() + "' (chart kinds: " + kKinds + ")");
      if (cmd->get_subcommands().empty()) throw Error(ErrorKind::kUsage, std::string("give a chart kind: ") + kKinds);
      check_common_options(*args);
      if (dist->parsed()) plot_distribution(*args);
      else if (hist->parsed()) plot_histogram(*args);
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
