// What `trialdb plot` was asked for, and the pieces its chart kinds share (src/cmd_plot.cc wires
// the command line; src/plot_reduction.cc and src/plot_distribution.cc draw their charts).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "schema/database.h"
#include "schema/py_regex.h"
#include "src/open_db.h"

namespace trialdb::cli {

struct PlotArgs {
  std::string db, out, title;
  int width = 900, height = 0;  // 0: a height that suits the chart
  std::vector<std::string> trials;
  std::string mode, worker;        // distribution, percentiles, findings: one mode or all
  std::vector<std::string> modes;  // reduction: the modes to show (empty: all)
  bool by_mode = false;            // reduction: one line per mode
  // distribution
  std::string tensor;
  int bins = 50;
  std::vector<double> range;
  bool linear_color = false;
  bool shared_scale = false;  // the same value bins and colour scale in every panel
  // reduction
  std::string tensor_regex;
  std::string reduction = "l2";
  bool abs = false;
  bool log_y = false;
  // findings
  std::string rule_regex;
  bool by_tensor = false;
  // every chart: --steps A:B (A <= x < B, x the step the chart's x axis shows)
  std::string steps;
  int64_t step_lo = INT64_MIN, step_hi = INT64_MAX;
  // line charts (reduction, percentiles, histogram)
  bool symlog_y = false;
  size_t max_points = 0;  // 0: every point
  double smooth = 0;      // reduction: TensorBoard's smoothing weight, 0 <= w < 1
  // histogram
  std::vector<int64_t> hist_steps;
  bool offset = false;
};

// Parses --steps into a.step_lo / a.step_hi and checks the line-chart options; throws a usage
// Error naming the option.
void check_common_options(PlotArgs& a);
bool in_step_range(const PlotArgs& a, int64_t x);

// "global step", or "<MODE> step" when a mode is chosen (x is then the mode step).
std::string step_title(const PlotArgs& a);

// The regex of an option, or a usage error naming the option.
std::unique_ptr<PyRegex> compile_or_throw(const std::string& pattern, const char* option);

void plot_reduction(const PlotArgs& a);     // reductions over steps (src/plot_reduction.cc)
void plot_distribution(const PlotArgs& a);  // heat map of histogram_buckets
void plot_percentiles(const PlotArgs& a);   // percentile bands of distributions
void plot_histogram(const PlotArgs& a);     // one step's histogram, or several overlaid

}  // namespace trialdb::cli
