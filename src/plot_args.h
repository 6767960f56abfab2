// What `trialdb plot` was asked for, and the pieces its chart kinds share (src/cmd_plot.cc wires
// the command line; src/plot_reduction.cc and src/plot_distribution.cc draw their charts).
#pragma once
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
  std::string mode, worker;     // distribution, percentiles, findings: one mode or all
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
};

// "global step", or "<MODE> step" when a mode is chosen (x is then the mode step).
std::string step_title(const PlotArgs& a);

// The regex of an option, or a usage error naming the option.
std::unique_ptr<PyRegex> compile_or_throw(const std::string& pattern, const char* option);

void plot_reduction(const PlotArgs& a);      // reductions over steps (src/plot_reduction.cc)
void plot_distribution(const PlotArgs& a);   // heat map of histogram_buckets
void plot_percentiles(const PlotArgs& a);    // percentile bands of distributions

}  // namespace trialdb::cli
