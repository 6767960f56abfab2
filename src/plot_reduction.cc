// The reduction chart of `trialdb plot`: a reduction (l2, mean, ...) over steps of the tensors
// matching a regex, in one or more trials, one line per tensor, trial, mode and worker, from the
// public view reductions. Series are told apart by colour and marker (the tensors) and by dash
// (trials, modes or workers), so TRAIN and EVAL of a loss are two lines on one chart.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "schema/database.h"
#include "schema/py_regex.h"
#include "src/open_db.h"
#include "src/output.h"
#include "src/plot/chart.h"
#include "src/plot/series_ops.h"
#include "src/plot_args.h"

namespace trialdb::cli {

extern const char* const kReductionRowsSql;  // src/cmd_compare.cc

namespace {

using plot::LegendEntry;

// Names in the order people count: digit runs compare as numbers, so layer2 comes before layer10.
bool natural_less(const std::string& x, const std::string& y) {
  size_t i = 0, j = 0;
  while (i < x.size() && j < y.size()) {
    if (std::isdigit(static_cast<unsigned char>(x[i])) && std::isdigit(static_cast<unsigned char>(y[j]))) {
      size_t i_end = i, j_end = j;
      while (i_end < x.size() && std::isdigit(static_cast<unsigned char>(x[i_end]))) i_end++;
      while (j_end < y.size() && std::isdigit(static_cast<unsigned char>(y[j_end]))) j_end++;
      // Without leading zeros, the longer run is the larger number; equal lengths compare as text.
      const std::string_view a = std::string_view(x).substr(i, i_end - i), b = std::string_view(y).substr(j, j_end - j);
      const std::string_view an = a.substr(std::min(a.find_first_not_of('0'), a.size()));
      const std::string_view bn = b.substr(std::min(b.find_first_not_of('0'), b.size()));
      if (an.size() != bn.size()) return an.size() < bn.size();
      if (an != bn) return an < bn;
      i = i_end;
      j = j_end;
    } else {
      if (x[i] != y[j]) return x[i] < y[j];
      i++;
      j++;
    }
  }
  return x.size() - i < y.size() - j;
}

// Modes in the order training goes through them (TRAIN first), unknown ones last.
int mode_rank(const std::string& mode) {
  static const char* const kOrder[] = {"TRAIN", "EVAL", "PREDICT", "GLOBAL"};
  return static_cast<int>(std::find(std::begin(kOrder), std::end(kOrder), mode) - std::begin(kOrder));
}

// Why no tensor matching the regex has a value to draw, as a hint the user can act on: no
// tensor matches, the reduction exists only in other modes, or only other reductions exist.
std::string no_reduction_hint(Database& db, const PlotArgs& a, const std::vector<std::string>& trials,
                              const PyRegex& re) {
  const std::string where = "in trial" + std::string(trials.size() == 1 ? " " + trials[0] : "s " + join(trials, ", "));
  std::set<std::string> matched, modes, others;
  Statement q(db.handle(), "SELECT DISTINCT tensor, reduction, abs, mode FROM reductions WHERE trial = ?1");
  Statement names(db.handle(), "SELECT tensor FROM tensors WHERE trial = ?1");
  for (const std::string& trial : trials) {
    names.reset();
    names.bind(1, trial);
    while (names.step())
      if (re.search(names.text(0))) matched.insert(names.text(0));
    q.reset();
    q.bind(1, trial);
    while (q.step()) {
      if (!re.search(q.text(0))) continue;
      if (q.text(1) == a.reduction && (q.int64(2) != 0) == a.abs) modes.insert(q.text(3));
      else others.insert(q.text(1) + (q.int64(2) ? " --abs" : ""));
    }
  }
  const std::string what = a.reduction + (a.abs ? " of |x|" : "");
  if (matched.empty())
    return "no tensor " + where + " matches --tensor '" + a.tensor_regex + "' (list them with: trialdb info --db " +
           a.db + " --tensors)";
  const bool one = matched.size() == 1;
  const std::string tensors =
      (one ? "the tensor " + *matched.begin()
           : "the " + std::to_string(matched.size()) + " tensors matching '" + a.tensor_regex + "'") +
      " " + where + (one ? " has" : " have");
  std::vector<std::string> mode_list(modes.begin(), modes.end());
  std::sort(mode_list.begin(), mode_list.end(),
            [](const std::string& x, const std::string& y) { return mode_rank(x) < mode_rank(y); });
  if (!modes.empty())
    return tensors + " no " + what + " values in mode " + join(a.modes, " or ") + "; " +
           (one ? "it has" : "they have") + " some in " + join(mode_list, ", ");
  if (!others.empty())
    return tensors + " no " + what + " values; " + (one ? "it has" : "they have") + " " +
           join({others.begin(), others.end()}, ", ") + " (choose with --reduction and --abs)";
  return tensors + " no reductions (not numeric, or saved as shapes only)";
}

constexpr double kRawAlpha = 0.25;  // the raw line under a smoothed one

// The points of a line to draw: all of them, or --max-points of them keeping the extremes.
void drawn_points(const PlotArgs& a, const std::vector<double>& x, const std::vector<double>& y, plot::LineSeries* s) {
  s->x.clear();
  s->y.clear();
  const std::vector<size_t> keep = plot::keep_extremes(x, y, a.max_points ? a.max_points : x.size());
  for (size_t i : keep) {
    s->x.push_back(x[i]);
    s->y.push_back(y[i]);
  }
}

}  // namespace

void plot_reduction(const PlotArgs& a) {
  if (a.tensor_regex.empty()) throw Error(ErrorKind::kUsage, "reduction: give --tensor REGEX (e.g. '^gradient/')");
  auto re = compile_or_throw(a.tensor_regex, "--tensor");
  auto db = open_db(a.db, OpenMode::kReadOnly);
  std::vector<std::string> trials = a.trials.empty() ? all_trials(*db) : a.trials;
  require_trials(*db, trials);
  if (trials.empty()) throw Error(ErrorKind::kInvalidInput, a.db + " has no trials");

  // One mode: x is its mode step. Several, or --by-mode: x is the global step, a line per mode.
  const bool one_mode = a.modes.size() == 1;
  const bool split_modes = a.by_mode || a.modes.size() > 1;
  const std::set<std::string> mode_filter(a.modes.begin(), a.modes.end());
  struct Points {
    std::vector<double> x, y;
  };
  // (trial, tensor, mode or "", worker) -> points in step order
  std::map<std::tuple<size_t, std::string, std::string, std::string>, Points> series;
  std::set<std::string> tensors, workers, modes;
  Statement q(db->handle(), kReductionRowsSql);  // tensor, mode, mode_step, step, worker, value
  std::map<std::string, bool> wanted;
  for (size_t ti = 0; ti < trials.size(); ti++) {
    q.reset();
    q.bind(1, trials[ti]).bind(2, a.reduction).bind(3, a.abs ? 1 : 0).bind(4, one_mode ? a.modes[0] : "");
    while (q.step()) {
      std::string tensor = q.text(0);
      auto it = wanted.find(tensor);
      if (it == wanted.end()) it = wanted.emplace(tensor, re->search(tensor)).first;
      if (!it->second) continue;
      const std::string mode = q.text(1);
      if (!mode_filter.empty() && !mode_filter.count(mode)) continue;
      std::string worker = q.text(4);
      if (!a.worker.empty() && worker != a.worker) continue;
      const int64_t x = one_mode ? q.int64(2) : q.int64(3);
      if (!in_step_range(a, x)) continue;
      Points& p = series[{ti, tensor, split_modes ? mode : "", worker}];
      p.x.push_back(static_cast<double>(x));
      p.y.push_back(q.is_null(5) ? NAN : q.real(5));
      tensors.insert(tensor);
      workers.insert(worker);
      if (split_modes) modes.insert(mode);
    }
  }
  if (series.empty())
    throw Error(ErrorKind::kInvalidInput, "nothing to draw: " + no_reduction_hint(*db, a, trials, *re));
  if (tensors.size() > static_cast<size_t>(plot::kDistinctStyles))
    throw Error(ErrorKind::kUsage, "--tensor '" + a.tensor_regex + "' matches " + std::to_string(tensors.size()) +
                                       " tensors; narrow it to " + std::to_string(plot::kDistinctStyles) +
                                       " or fewer so the chart stays readable");

  // The first way series differ (tensors; the trials when there is one tensor) gets colour and
  // marker; the others (trials, modes, or the workers of one trial) the line's dash. With nothing
  // else, the dash varies with the colour's round, so 40 tensors all look different.
  std::vector<std::string> tensor_list(tensors.begin(), tensors.end());
  std::sort(tensor_list.begin(), tensor_list.end(), natural_less);
  const bool primary_is_trial = tensor_list.size() == 1 && trials.size() > 1;
  const bool trial_part = !primary_is_trial && trials.size() > 1;
  const bool mode_part = modes.size() > 1;
  const bool worker_part = workers.size() > 1 && !trial_part && !mode_part;
  const bool worker_lines = workers.size() > 1 && !worker_part;  // told apart by their labels only
  // The dash groups in order (trial, mode as training goes: TRAIN first, worker), so the main
  // curve is the solid one.
  std::vector<std::string> secondary;
  const auto group_of = [&](size_t ti, const std::string& mode, const std::string& worker) {
    std::vector<std::string> parts;
    if (trial_part) parts.push_back(trials[ti]);
    if (mode_part) parts.push_back(mode);
    if (worker_part) parts.push_back(worker);
    return join(parts, " · ");
  };
  {
    std::set<std::tuple<size_t, int, std::string, std::string>> order;
    for (const auto& [key, pts] : series) {
      const auto& [ti, tensor, mode, worker] = key;
      order.insert({ti, mode_rank(mode), mode, worker});
    }
    for (const auto& [ti, rank, mode, worker] : order) {
      const std::string group = group_of(ti, mode, worker);
      if (!group.empty() && std::find(secondary.begin(), secondary.end(), group) == secondary.end())
        secondary.push_back(group);
    }
  }
  std::string secondary_title = join(
      [&] {
        std::vector<std::string> parts;
        if (trial_part) parts.push_back("trial");
        if (mode_part) parts.push_back("mode");
        if (worker_part) parts.push_back("worker");
        return parts;
      }(),
      " · ");
  std::string red = a.reduction + (a.abs ? " of |x|" : "");
  std::vector<std::string> mode_list(modes.begin(), modes.end());
  std::sort(mode_list.begin(), mode_list.end(),
            [](const std::string& x, const std::string& y) { return mode_rank(x) < mode_rank(y); });
  std::string mode_note = one_mode ? " (" + a.modes[0] + ")" : mode_part ? " (" + join(mode_list, " and ") + ")" : "";
  plot::LineChart chart;
  chart.title = a.title.empty()
                    ? red + " of " +
                          (tensor_list.size() == 1 ? tensor_list[0] : "tensors matching '" + a.tensor_regex + "'") +
                          (trials.size() == 1 ? " in " + trials[0] : "") + mode_note
                    : a.title;
  chart.x_title = one_mode ? a.modes[0] + " step" : "global step";
  chart.y_title = red +
                  (a.log_y      ? " (log scale)"
                   : a.symlog_y ? " (symmetric log scale)"
                                : "") +
                  (a.smooth > 0 ? ", smoothed " + plot::format_number(a.smooth) : "");
  chart.log_y = a.log_y;
  chart.symlog_y = a.symlog_y;
  if (a.symlog_y) {
    std::vector<std::vector<double>> ys;
    for (const auto& [key, pts] : series) ys.push_back(pts.y);
    chart.symlog_linthresh = plot::symlog_threshold(ys);
  }
  for (auto& [key, pts] : series) {
    const auto& [ti, tensor, mode, worker] = key;
    const int primary = static_cast<int>(
        primary_is_trial ? ti : std::find(tensor_list.begin(), tensor_list.end(), tensor) - tensor_list.begin());
    const plot::SeriesStyle style = plot::series_style(primary);
    plot::LineSeries s;
    s.color = style.color;
    s.marker = style.marker;
    s.dash = style.dash;
    if (const std::string group = group_of(ti, mode, worker); !group.empty())
      s.dash =
          plot::dash_kind(static_cast<int>(std::find(secondary.begin(), secondary.end(), group) - secondary.begin()));
    s.label = tensor + (worker_lines ? " (" + worker + ")" : "");
    // Smoothed: the raw values faint beneath, as TensorBoard draws them.
    if (a.smooth > 0) {
      plot::LineSeries raw = s;
      raw.alpha = kRawAlpha;
      raw.markers = false;
      raw.dash = plot::Dash::Solid;
      drawn_points(a, pts.x, pts.y, &raw);
      chart.series.push_back(std::move(raw));
      pts.y = plot::ema_smooth(pts.y, a.smooth);
    }
    drawn_points(a, pts.x, pts.y, &s);
    chart.series.push_back(std::move(s));
  }
  const std::vector<std::string>& primary_labels = primary_is_trial ? trials : tensor_list;
  if (primary_labels.size() > 1 || !secondary.empty())
    chart.legend.push_back({primary_is_trial ? "trial" : "tensor", {}, plot::Dash::Solid, LegendEntry::Line, true});
  for (size_t i = 0; i < primary_labels.size(); i++) {
    const plot::SeriesStyle style = plot::series_style(static_cast<int>(i));
    chart.legend.push_back({primary_labels[i], style.color, secondary.empty() ? style.dash : plot::Dash::Solid,
                            LegendEntry::Line, false, style.marker});
  }
  if (!secondary.empty()) {
    chart.legend.push_back({secondary_title, {}, plot::Dash::Solid, LegendEntry::Line, true});
    for (size_t i = 0; i < secondary.size(); i++)
      chart.legend.push_back(
          {secondary[i], {0.25, 0.25, 0.25}, plot::dash_kind(static_cast<int>(i)), LegendEntry::Line});
  }
  if (worker_lines) chart.legend.push_back({"one line per worker", {}, plot::Dash::Solid, LegendEntry::Line, true});
  plot::render_line_chart(chart, a.out, {a.width, a.height ? a.height : 540, a.height == 0});
}

}  // namespace trialdb::cli
