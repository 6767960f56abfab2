// The distribution charts of `trialdb plot`, drawn from the statistics computed at ingest (views
// histograms and distributions), so their cost grows with steps and buckets, never with the
// elements of the tensor:
//   distribution  a heat map: each step's buckets (the histograms view's compact runs, decoded
//                 here rather than expanded by SQL) spread over the display bins
//   percentiles   bands between p0/p100, p1/p99, p5/p95, p10/p90 and p25/p75 with the median as
//                 a line (TensorBoard's "distributions" chart); the workers of a step are merged
//                 by distribution_quantile over their buckets
#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "kernels/bucket_grid.h"
#include "kernels/histogram_bins.h"
#include "schema/histogram_blob.h"
#include "src/open_db.h"
#include "src/output.h"
#include "src/plot/chart.h"
#include "src/plot/series_ops.h"
#include "src/plot_args.h"

namespace trialdb::cli {

namespace {

// The rows of one tensor of one trial in a view, with the plot's mode, worker and --steps
// filters (the step of the x axis: the mode step when a mode is chosen).
constexpr const char* kFilter =
    " WHERE trial = ?1 AND tensor = ?2 AND (?3 = '' OR mode = ?3) AND (?4 = '' OR worker = ?4)"
    " AND (CASE WHEN ?3 = '' THEN step ELSE mode_step END) >= ?5 AND (CASE WHEN ?3 = '' THEN step ELSE mode_step END) "
    "< ?6";

void bind_filter(Statement& q, const PlotArgs& a, const std::string& trial) {
  q.bind(1, trial).bind(2, a.tensor).bind(3, a.mode).bind(4, a.worker).bind(5, a.step_lo).bind(6, a.step_hi);
}

std::unique_ptr<Statement> filtered(Database& db, const std::string& select_from, const PlotArgs& a,
                                    const std::string& trial) {
  auto q = std::make_unique<Statement>(db.handle(), select_from + kFilter);
  bind_filter(*q, a, trial);
  return q;
}

// Why a trial has nothing to draw, as an error naming what to change: an unknown tensor, a mode
// or worker it has no values of, or a tensor with no numeric raw values at all.
std::string nothing_to_draw(Database& db, const PlotArgs& a, const std::string& trial) {
  Statement any(db.handle(), "SELECT count(*) FROM tensors WHERE trial = ?1 AND tensor = ?2");
  any.bind(1, trial).bind(2, a.tensor);
  any.step();
  if (any.int64(0) == 0)
    throw Error(ErrorKind::kInvalidInput, "trial " + trial + " has no tensor named '" + a.tensor +
                                              "' (list them with: trialdb info --db " + a.db + " --trial " + trial +
                                              " --tensors)");
  std::vector<std::string> modes, workers;
  Statement has(db.handle(),
                "SELECT DISTINCT mode, worker FROM distributions WHERE trial = ?1 AND tensor = ?2 ORDER BY 1, 2");
  has.bind(1, trial).bind(2, a.tensor);
  while (has.step()) {
    if (std::find(modes.begin(), modes.end(), has.text(0)) == modes.end()) modes.push_back(has.text(0));
    if (std::find(workers.begin(), workers.end(), has.text(1)) == workers.end()) workers.push_back(has.text(1));
  }
  if (modes.empty()) return "no numeric raw values (saved as reductions or shapes only)";
  if (!a.mode.empty() && std::find(modes.begin(), modes.end(), a.mode) == modes.end())
    return "no values in mode " + a.mode + " (it has values in " + join(modes, ", ") + ")";
  return "no values of worker " + a.worker + " (its workers: " + join(workers, ", ") + ")";
}

// Adds a bucket's count to the display bins it overlaps, in proportion to the overlap (a zero
// bucket, and the outermost buckets with an infinite edge, are a point); returns the part of it
// outside the bins.
double spread_bucket(double lo, double hi, double count, const std::vector<double>& edges, double* col) {
  const int64_t bins = static_cast<int64_t>(edges.size()) - 1;
  const double elo = edges.front(), ehi = edges.back();
  if (std::isinf(hi)) hi = lo;
  if (std::isinf(lo)) lo = hi;
  if (lo == hi) {
    if (lo < elo || lo > ehi) return count;
    col[clamped_bin(range_fraction(lo, elo, ehi), bins).value_or(0)] += count;
    return 0;
  }
  const double width = hi - lo;
  double inside = 0;
  const int64_t first = clamped_bin(range_fraction(std::max(lo, elo), elo, ehi), bins).value_or(0);
  for (int64_t b = first; b < bins && edges[b] < hi; ++b) {
    const double overlap = std::min(hi, edges[b + 1]) - std::max(lo, edges[b]);
    if (overlap <= 0) continue;
    col[b] += count * overlap / width;
    inside += overlap;
  }
  return count * (1 - std::min(1.0, inside / width));
}

// One trial's histograms: each step's buckets (workers pooled), decoded from their blobs,
// the value range they cover, and which steps are EVAL steps.
struct TrialBuckets {
  std::map<int64_t, std::vector<std::pair<int64_t, uint64_t>>> steps;
  std::set<int64_t> eval_steps;
  double lo = INFINITY, hi = -INFINITY;
};

TrialBuckets trial_buckets(Database& db, const PlotArgs& a, const std::string& trial) {
  TrialBuckets t;
  std::vector<std::pair<int64_t, uint64_t>> runs;
  auto q = filtered(db, "SELECT step, mode_step, buckets, mode FROM histogram_blobs", a, trial);
  while (q->step()) {
    runs.clear();  // NULL: no finite elements
    if (const Status st = q->is_null(2) ? Status::ok() : decode_histogram_blob(q->blob(2), &runs); !st.is_ok())
      throw Error(ErrorKind::kDatabase, "trial " + trial + ", tensor " + a.tensor + " at step " +
                                            std::to_string(q->int64(0)) + ": " + st.cause());
    const int64_t x = a.mode.empty() ? q->int64(0) : q->int64(1);
    if (a.mode.empty() && q->text(3) == "EVAL") t.eval_steps.insert(x);  // marked where modes mix
    auto& buckets = t.steps[x];
    for (const auto& [bucket, count] : runs) {
      const double blo = bucket_lo(bucket), bhi = bucket_hi(bucket);
      t.lo = std::min(t.lo, std::isinf(blo) ? bhi : blo);
      t.hi = std::max(t.hi, std::isinf(bhi) ? blo : bhi);
      buckets.emplace_back(bucket, count);
    }
  }
  return t;
}

// A trial's heat map over the value range [lo, hi] (--range, the trial's own, or all trials').
plot::HeatPanel distribution_panel(Database& db, const PlotArgs& a, const std::string& trial, const TrialBuckets& t,
                                   double lo, double hi) {
  plot::HeatPanel p;
  p.title = trial;
  if (!(lo <= hi)) lo = 0, hi = 1;                    // no finite element at all
  if (hi == lo) plot::pad_range(&lo, &hi, 0, false);  // a single distinct value
  const int bins = a.bins;
  for (int b = 0; b <= bins; b++) p.y_edges.push_back(bin_edge(lo, hi, b, bins));
  double outside = 0;
  for (const auto& [x, buckets] : t.steps) {
    p.x.push_back(static_cast<double>(x));
    p.marked.push_back(t.eval_steps.count(x) > 0);
    p.counts.resize(p.counts.size() + static_cast<size_t>(bins), 0.0);
    double* col = p.counts.data() + p.counts.size() - static_cast<size_t>(bins);
    for (const auto& [bucket, count] : buckets)
      outside += spread_bucket(bucket_lo(bucket), bucket_hi(bucket), static_cast<double>(count), p.y_edges, col);
  }
  auto nonfinite = filtered(db, "SELECT coalesce(sum(nan + pos_inf + neg_inf), 0) FROM distributions", a, trial);
  nonfinite->step();
  if (nonfinite->int64(0)) p.note = std::to_string(nonfinite->int64(0)) + " NaN/Inf values left out";
  if (const auto n = static_cast<int64_t>(std::llround(outside)); n > 0)
    p.note += (p.note.empty() ? "" : "; ") + std::to_string(n) + " values outside --range";
  return p;
}

// ---------------------------------------------------------------------------------------------
// percentiles

constexpr int kPercents = 11;
constexpr double kPercent[kPercents] = {0, 1, 5, 10, 25, 50, 75, 90, 95, 99, 100};
constexpr const char* kPercentColumns = "p0, p1, p5, p10, p25, p50, p75, p90, p95, p99, p100";

struct PercentileSeries {
  std::vector<double> x;
  std::vector<double> p[kPercents];
};

// A step's percentiles: from distributions when it has one value per step, otherwise each
// step's workers merged (distribution_quantile over their buckets).
PercentileSeries percentile_series(Database& db, const PlotArgs& a, const std::string& trial) {
  const char* x = a.mode.empty() ? "step" : "mode_step";
  std::string sql = std::string("SELECT ") + x + ", count(*) FROM distributions" + kFilter + " GROUP BY 1";
  Statement counts(db.handle(), sql);
  bind_filter(counts, a, trial);
  bool merged = false;
  while (counts.step()) merged |= counts.int64(1) > 1;
  std::string select;
  if (merged) {
    select = std::string("SELECT ") + x;
    for (double pc : kPercent) select += ", distribution_quantile(lo, hi, count, " + std::to_string(pc / 100) + ")";
    select += " FROM histogram_buckets";
  } else {
    select = std::string("SELECT ") + x + ", " + kPercentColumns + " FROM distributions";
  }
  Statement q(db.handle(), select + kFilter + (merged ? " GROUP BY 1" : "") + " ORDER BY 1");
  bind_filter(q, a, trial);
  PercentileSeries s;
  while (q.step()) {
    s.x.push_back(static_cast<double>(q.int64(0)));
    for (int i = 0; i < kPercents; ++i) s.p[i].push_back(q.is_null(i + 1) ? NAN : q.real(i + 1));
  }
  return s;
}

// --log / --symlog of a line chart over these values.
void set_y_scale(const PlotArgs& a, const std::vector<std::vector<double>>& ys, plot::LineChart* chart) {
  chart->log_y = a.log_y;
  chart->symlog_y = a.symlog_y;
  if (a.symlog_y) chart->symlog_linthresh = plot::symlog_threshold(ys);
}

}  // namespace

void plot_distribution(const PlotArgs& a) {
  if (a.trials.empty()) throw Error(ErrorKind::kUsage, "distribution: give at least one --trial");
  if (a.tensor.empty()) throw Error(ErrorKind::kUsage, "distribution: give --tensor NAME");
  if (a.bins < 2 || a.bins > 1000) throw Error(ErrorKind::kUsage, "--bins must be between 2 and 1000");
  if (a.range.size() == 2 && !(std::isfinite(a.range[0]) && std::isfinite(a.range[1])))
    throw Error(ErrorKind::kUsage, "--range: LO and HI must be finite numbers");
  if (a.range.size() == 2 && !(a.range[0] < a.range[1])) throw Error(ErrorKind::kUsage, "--range: LO must be below HI");
  auto db = open_db(a.db, OpenMode::kReadOnly);
  require_trials(*db, a.trials);
  // A trial with nothing to draw gets a panel saying why; when no trial has anything, the chart
  // would be empty: an error saying why instead.
  std::vector<TrialBuckets> loaded;
  std::vector<std::string> why_empty;
  double all_lo = INFINITY, all_hi = -INFINITY;
  for (const std::string& t : a.trials) {
    loaded.push_back(trial_buckets(*db, a, t));
    why_empty.push_back(loaded.back().steps.empty() ? nothing_to_draw(*db, a, t) : "");
    all_lo = std::min(all_lo, loaded.back().lo);
    all_hi = std::max(all_hi, loaded.back().hi);
  }
  if (std::find(why_empty.begin(), why_empty.end(), "") == why_empty.end()) {
    std::vector<std::string> reasons;
    for (size_t i = 0; i < a.trials.size(); i++) reasons.push_back("trial " + a.trials[i] + ": " + why_empty[i]);
    throw Error(ErrorKind::kInvalidInput, "nothing to draw: tensor " + a.tensor + ", " + join(reasons, "; "));
  }
  plot::HeatMap map;
  map.title = a.title.empty() ? "distribution of " + a.tensor + (a.mode.empty() ? "" : " (" + a.mode + ")") : a.title;
  map.x_title = step_title(a);
  map.y_title = "value";
  map.color_title = "elements per bin";
  map.mark_label = "EVAL step";
  map.log_color = !a.linear_color;
  map.shared_color = a.shared_scale;
  for (size_t i = 0; i < a.trials.size(); i++) {
    const bool given = a.range.size() == 2;
    const double lo = given ? a.range[0] : a.shared_scale ? all_lo : loaded[i].lo;
    const double hi = given ? a.range[1] : a.shared_scale ? all_hi : loaded[i].hi;
    map.panels.push_back(distribution_panel(*db, a, a.trials[i], loaded[i], lo, hi));
    if (!why_empty[i].empty()) map.panels.back().note = why_empty[i];
  }
  int h = a.height ? a.height : std::max(540, 120 + 300 * static_cast<int>(map.panels.size()));
  plot::render_heatmap(map, a.out, {a.width, h});
}

void plot_percentiles(const PlotArgs& a) {
  if (a.trials.size() != 1) throw Error(ErrorKind::kUsage, "percentiles: give one --trial");
  if (a.tensor.empty()) throw Error(ErrorKind::kUsage, "percentiles: give --tensor NAME");
  auto db = open_db(a.db, OpenMode::kReadOnly);
  require_trials(*db, a.trials);
  const PercentileSeries s = percentile_series(*db, a, a.trials[0]);
  if (s.x.empty())
    throw Error(ErrorKind::kInvalidInput, "nothing to draw: trial " + a.trials[0] + ", tensor " + a.tensor + ": " +
                                              nothing_to_draw(*db, a, a.trials[0]));
  plot::LineChart chart;
  chart.title = a.title.empty()
                    ? "percentiles of " + a.tensor + " in " + a.trials[0] + (a.mode.empty() ? "" : " (" + a.mode + ")")
                    : a.title;
  chart.x_title = step_title(a);
  chart.y_title = std::string("value") + (a.log_y ? " (log scale)" : a.symlog_y ? " (symmetric log scale)" : "");
  set_y_scale(a, {s.p, s.p + kPercents}, &chart);
  // Outer bands first, lighter: p0-p100, p1-p99, p5-p95, p10-p90, p25-p75.
  // Each band is drawn over the wider ones, so the legend shows the colour their overlap makes.
  const plot::Rgb band{0.16, 0.42, 0.70};
  const double alpha[] = {0.12, 0.16, 0.20, 0.26, 0.34};
  double shown = 0;  // opacity where this band and the wider ones overlap
  for (int i = 0; i < 5; ++i) {
    chart.bands.push_back({s.x, s.p[i], s.p[kPercents - 1 - i], band, alpha[i]});
    shown = shown + alpha[i] * (1 - shown);
    const plot::Rgb swatch{1 - shown * (1 - band.r), 1 - shown * (1 - band.g), 1 - shown * (1 - band.b)};
    // Appended rather than `"p" + std::to_string(...)`, which GCC 12 at -O3 warns about (-Wrestrict, GCC bug 105329).
    std::string label(1, 'p');
    label += std::to_string(static_cast<int>(kPercent[i]));
    label += " to p";
    label += std::to_string(static_cast<int>(kPercent[kPercents - 1 - i]));
    chart.legend.push_back({label, swatch, plot::Dash::Solid, plot::LegendEntry::Box});
  }
  plot::LineSeries median{"median", {}, {}, {0.05, 0.15, 0.35}, plot::Dash::Solid, plot::Marker::Circle};
  for (size_t i : plot::keep_extremes(s.x, s.p[5], a.max_points ? a.max_points : s.x.size())) {
    median.x.push_back(s.x[i]);
    median.y.push_back(s.p[5][i]);
  }
  chart.series.push_back(std::move(median));
  chart.legend.push_back(
      {"median", {0.05, 0.15, 0.35}, plot::Dash::Solid, plot::LegendEntry::Line, false, plot::Marker::Circle});
  plot::render_line_chart(chart, a.out, {a.width, a.height ? a.height : 540, a.height == 0});
}

void plot_histogram(const PlotArgs& a) {
  if (a.trials.size() != 1) throw Error(ErrorKind::kUsage, "histogram: give one --trial");
  if (a.bins < 2 || a.bins > 1000) throw Error(ErrorKind::kUsage, "--bins must be between 2 and 1000");
  if (a.range.size() == 2 && !(std::isfinite(a.range[0]) && std::isfinite(a.range[1]) && a.range[0] < a.range[1]))
    throw Error(ErrorKind::kUsage, "--range: LO and HI must be finite numbers, LO below HI");
  auto db = open_db(a.db, OpenMode::kReadOnly);
  require_trials(*db, a.trials);
  const std::string& trial = a.trials[0];
  TrialBuckets all = trial_buckets(*db, a, trial);
  if (all.steps.empty())
    throw Error(ErrorKind::kInvalidInput,
                "nothing to draw: trial " + trial + ", tensor " + a.tensor + ": " + nothing_to_draw(*db, a, trial));
  // The steps asked for (each must have a histogram), else the last one.
  TrialBuckets chosen;
  if (a.hist_steps.empty()) {
    chosen.steps.insert(*all.steps.rbegin());
  } else {
    for (int64_t step : a.hist_steps) {
      const auto it = all.steps.find(step);
      if (it == all.steps.end()) {
        std::vector<std::string> some;
        for (const auto& [x, b] : all.steps) some.push_back(std::to_string(x));
        if (some.size() > 12) some.erase(some.begin() + 6, some.end() - 6), some.insert(some.begin() + 6, "...");
        throw Error(ErrorKind::kInvalidInput, "trial " + trial + ", tensor " + a.tensor + " has no histogram at " +
                                                  step_title(a) + " " + std::to_string(step) + " (it has " +
                                                  join(some, ", ") + ")");
      }
      chosen.steps.insert(*it);
    }
  }
  chosen.lo = INFINITY;
  chosen.hi = -INFINITY;
  for (const auto& [x, buckets] : chosen.steps)
    for (const auto& [bucket, count] : buckets) {
      const double blo = bucket_lo(bucket), bhi = bucket_hi(bucket);
      chosen.lo = std::min(chosen.lo, std::isinf(blo) ? bhi : blo);
      chosen.hi = std::max(chosen.hi, std::isinf(bhi) ? blo : bhi);
    }
  const bool given = a.range.size() == 2;
  const plot::HeatPanel bins =
      distribution_panel(*db, a, trial, chosen, given ? a.range[0] : chosen.lo, given ? a.range[1] : chosen.hi);
  const size_t nbins = bins.y_edges.size() - 1;
  // Offset: each later step raised by a fifth of the tallest bin, so the curves read as a stack.
  double tallest = 0;
  for (double c : bins.counts) tallest = std::max(tallest, c);
  const double offset = a.offset ? tallest * 0.2 : 0;
  plot::LineChart chart;
  chart.title = a.title.empty()
                    ? "histogram of " + a.tensor + " in " + trial + (a.mode.empty() ? "" : " (" + a.mode + ")")
                    : a.title;
  chart.x_title = "value";
  chart.y_title = std::string("elements per bin") + (a.offset ? ", each step raised" : "") +
                  (a.log_y      ? " (log scale)"
                   : a.symlog_y ? " (symmetric log scale)"
                                : "");
  std::vector<std::vector<double>> ys;
  for (size_t col = 0; col < bins.x.size(); ++col) {
    plot::LineSeries s;
    const plot::SeriesStyle style = plot::series_style(static_cast<int>(col));
    s.label = step_title(a) + " " + plot::format_number(bins.x[col], 10);
    s.color = style.color;
    s.marker = style.marker;
    s.markers = false;
    // A step-shaped line: each bin's count across the bin's width.
    for (size_t b = 0; b < nbins; ++b) {
      const double y = bins.counts[col * nbins + b] + offset * static_cast<double>(col);
      s.x.insert(s.x.end(), {bins.y_edges[b], bins.y_edges[b + 1]});
      s.y.insert(s.y.end(), {y, y});
    }
    ys.push_back(s.y);
    chart.legend.push_back({s.label, s.color, plot::Dash::Solid, plot::LegendEntry::Line});
    chart.series.push_back(std::move(s));
  }
  set_y_scale(a, ys, &chart);
  plot::render_line_chart(chart, a.out, {a.width, a.height ? a.height : 540, a.height == 0});
}

}  // namespace trialdb::cli
