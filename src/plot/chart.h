// The three charts trialdb draws, as plain data in and an image file out:
//   LineChart  values over steps, several series (a reduction per tensor and trial), and bands
//              between curves (percentile ranges)
//   HeatMap    a histogram per step as a column of coloured cells (a tensor's distribution
//              over training, the tensor analysis notebook's animated histograms in one still
//              image);
//              several panels stacked (one per trial) share the colour scale
//   Timeline   markers at the steps where something happened, one row per category (findings)
// Each render_* writes the file (format from its extension) and throws trialdb::Error on failure (plot/canvas.h).
#pragma once
#include <string>
#include <vector>

#include "src/plot/axes.h"
#include "src/plot/legend.h"

namespace trialdb::plot {

inline constexpr int kMaxImageSide = 20000;  // pixels

struct ImageSize {
  int width = 900, height = 540;
  bool grow = false;  // the height may grow so that the whole legend shows
};

struct LineSeries {
  std::string label;
  std::vector<double> x, y;  // NaN in y breaks the line
  Rgb color{0, 0, 0};
  Dash dash = Dash::Solid;
  Marker marker = Marker::Circle;  // at the points (at every few points on a long series)
  double alpha = 1;                // below 1: a faint line (the raw values under a smoothed one)
  bool markers = true;
};

// A filled band between two curves over the same x (a range of percentiles), under the lines.
struct LineBand {
  std::vector<double> x, lo, hi;  // a step where either is NaN breaks the band
  Rgb color{0, 0, 0};
  double alpha = 0.2;
};

struct LineChart {
  std::string title, x_title, y_title;
  bool log_y = false;     // non-positive values are left out (and counted in a note)
  bool symlog_y = false;  // symmetric log: log beyond +-symlog_linthresh, linear through zero
  double symlog_linthresh = 1;
  std::vector<LineBand> bands;
  std::vector<LineSeries> series;
  std::vector<LegendEntry> legend;
};

struct HeatPanel {
  std::string title;
  std::vector<double> x;        // column positions (steps), ascending
  std::vector<double> y_edges;  // bin edges, ascending, bins = y_edges.size() - 1
  std::vector<double> counts;   // x.size() * bins, column by column; count of elements in the bin
  std::vector<bool> marked;     // per column, or empty: columns marked above the plot (EVAL steps)
  std::string note;             // e.g. "3 NaN/Inf values left out"
};

struct HeatMap {
  std::string title, x_title, y_title, color_title;
  std::string mark_label;  // what a marked column is ("EVAL step"), shown in a key
  bool log_color = true;   // colour by log(1 + count): the tails of a peaked distribution show
  // One colour scale (and bar) for all panels, so colours compare across them; else each panel
  // has its own, and shows its own distribution in full contrast.
  bool shared_color = false;
  std::vector<HeatPanel> panels;
};

struct TimelineMark {
  int row;
  double x;
  int count;  // findings at this (row, x); drawn larger when > 1
  Rgb color;
};

struct Timeline {
  std::string title, x_title;
  std::vector<std::string> rows;  // top to bottom
  std::vector<TimelineMark> marks;
  std::vector<LegendEntry> legend;
  double x_lo = 0, x_hi = 0;  // the step range to show (hi > lo), e.g. the trial's steps
};

void render_line_chart(const LineChart& chart, const std::string& path, ImageSize size);
void render_heatmap(const HeatMap& map, const std::string& path, ImageSize size);
void render_timeline(const Timeline& timeline, const std::string& path, ImageSize size);

// Shared by the renderers: the title at the top; returns the y where content may start.
double draw_title(Canvas& c, const std::string& title, double font);
// The image height that shows the whole legend when size.grow allows (else size.height).
int fitted_height(ImageSize size, const LegendLayout& legend, double font);

}  // namespace trialdb::plot
