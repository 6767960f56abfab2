// The legend of a chart: entries (a line with its dash and marker, a filled box, or a marker,
// then a label; or a bold group heading), placed on the right of the plot when they fit in a
// third of the image's width, else below it in as many columns as fit, so a narrow image keeps
// its plot area and its labels readable.
#pragma once
#include <string>
#include <vector>

#include "src/plot/canvas.h"
#include "src/plot/colors.h"

namespace trialdb::plot {

struct LegendEntry {
  enum Kind { Line, Box, Point };
  std::string label;
  Rgb color{0, 0, 0};
  Dash dash = Dash::Solid;
  Kind kind = Line;
  bool heading = false;          // a group title ("trial"), drawn bold without a swatch
  Marker marker = Marker::None;  // on a Line: the series' point marker; a Point's shape
};

struct LegendLayout {
  bool below = false;  // else on the right
  int columns = 1;
  double column_width = 0;
  double width = 0, height = 0;  // all entries shown
  double font = 0, row = 0;
};

// Where and how big a legend is in an image of this width. Measured without a canvas, so the
// image height can be chosen to fit it.
LegendLayout layout_legend(const std::vector<LegendEntry>& entries, double font, double image_width);

// Draws the legend from (x, y) down; entries that do not fit in max_height are summarised as
// "+ N more".
void draw_legend(Canvas& c, const std::vector<LegendEntry>& entries, const LegendLayout& layout, double x, double y,
                 double max_height);

}  // namespace trialdb::plot
