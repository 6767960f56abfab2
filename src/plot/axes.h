// A pair of axes in a rectangle of the canvas: the layout (room for tick labels and axis
// titles), the value-to-pixel mapping, and the drawing of grid, frame, ticks and titles.
// Charts (chart.h) build on it; it knows nothing about trials.
#pragma once
#include <string>
#include <vector>

#include "src/plot/canvas.h"
#include "src/plot/colors.h"
#include "src/plot/ticks.h"

namespace trialdb::plot {

struct Rect {
  double x = 0, y = 0, w = 0, h = 0;
};

struct AxisSpec {
  std::string title;
  double lo = 0, hi = 1;
  bool log = false;
  bool symlog = false;                  // sign(v) * log10(1 + |v| / linthresh): log beyond
  double linthresh = 1;                 // +-linthresh, linear through zero
  bool integer = false;                 // whole-number ticks only (steps)
  std::vector<std::string> categories;  // non-empty: category i sits at value i (lo/hi ignored)
};

class Axes {
 public:
  // Lays out the plot area inside `area`, leaving room for tick labels and axis titles.
  Axes(Canvas& canvas, Rect area, AxisSpec x, AxisSpec y, double font_size);

  double px(double v) const;  // x value -> pixel
  double py(double v) const;  // y value -> pixel
  const Rect& plot() const { return plot_; }
  const AxisSpec& x_axis() const { return x_; }
  const AxisSpec& y_axis() const { return y_; }

  void draw_grid();   // light lines at the ticks, under the data
  void draw_frame();  // frame, tick marks, tick labels, axis titles, over the data
  // A note in the plot's top right corner, on a pale ground so the data under it does not hide it.
  void draw_note(const std::string& note);
  void clip();  // restrict drawing to the plot area (undo with unclip)
  void unclip();

 private:
  std::vector<Tick> ticks_for(const AxisSpec& a, double length_px, bool horizontal) const;

  Canvas& c_;
  AxisSpec x_, y_;
  double font_;
  Rect plot_;
  std::vector<Tick> xticks_, yticks_;
};

// Applies a dash pattern at this line width.
void set_dash(Canvas& c, Dash dash, double line_width);

// A filled point marker of radius r centred at (x, y), in the current colour.
void draw_marker(Canvas& c, Marker marker, double x, double y, double r);

// The font size that suits an image of this size (readable at 100%).
double base_font_size(int width, int height);

}  // namespace trialdb::plot
