// Line chart: values over steps, one line per series over filled bands, legend on the right.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "src/plot/chart.h"
#include "src/plot/cairo_api.h"

namespace trialdb::plot {

namespace {
constexpr size_t kAllMarkersUpTo = 80;  // points; longer series get markers at some of them
constexpr size_t kMarkersPerLine = 16;
}  // namespace

double draw_title(Canvas& c, const std::string& title, double font) {
  double top = font * 0.8;
  if (title.empty()) return top;
  // Wrapped at spaces onto at most kTitleLines lines; what does not fit even so loses its middle.
  constexpr size_t kTitleLines = 3;
  const double size = font * 1.25, width = c.width() - 2 * font;
  std::vector<std::string> lines{""};
  size_t word_start = 0;
  while (word_start < title.size()) {
    size_t space = title.find(' ', word_start);
    if (space == std::string::npos) space = title.size();
    const std::string word = title.substr(word_start, space - word_start);
    const std::string joined = lines.back().empty() ? word : lines.back() + " " + word;
    if (lines.back().empty() || c.text_width(joined, size, true) <= width || lines.size() == kTitleLines)
      lines.back() = joined;
    else lines.push_back(word);
    word_start = space + 1;
  }
  c.set_color(0.05, 0.05, 0.05);
  for (const std::string& line : lines) {
    c.text(c.width() / 2.0, top, c.fit_text(line, size, width, true, Canvas::Cut::Middle), size, HAlign::Center,
           VAlign::Top, true);
    top += size * 1.25;
  }
  return top + font * 0.6;
}

// The image height that shows the whole legend, when it may grow.
int fitted_height(ImageSize size, const LegendLayout& legend, double font) {
  if (!size.grow || legend.height == 0) return size.height;
  // Title, x tick labels and axis title take about 8 fonts; the plot keeps at least 45% of the height.
  constexpr double kFramingFonts = 8;
  const double needed = legend.below ? size.height * 0.45 + kFramingFonts * font + legend.height + font
                                     : legend.height + kFramingFonts * font;
  return std::min(kMaxImageSide, std::max(size.height, static_cast<int>(std::ceil(needed))));
}

void render_line_chart(const LineChart& chart, const std::string& path, ImageSize size) {
  const double f = base_font_size(size.width, size.height);
  const LegendLayout legend = layout_legend(chart.legend, f * 0.9, size.width);
  size.height = fitted_height(size, legend, f);
  Canvas c(path, size.width, size.height);
  double top = draw_title(c, chart.title, f);

  double xlo = std::numeric_limits<double>::infinity(), xhi = -xlo, ylo = xlo, yhi = -xlo;
  size_t left_out = 0, points = 0;
  const auto drawable = [&](double y) { return std::isfinite(y) && !(chart.log_y && y <= 0); };
  const auto include = [&](double x, double y) {
    if (!drawable(y)) return false;
    xlo = std::min(xlo, x);
    xhi = std::max(xhi, x);
    ylo = std::min(ylo, y);
    yhi = std::max(yhi, y);
    return true;
  };
  for (const LineSeries& s : chart.series)
    for (size_t i = 0; i < s.x.size() && i < s.y.size(); i++) {
      if (include(s.x[i], s.y[i])) points++;
      else left_out++;
    }
  for (const LineBand& b : chart.bands)
    for (size_t i = 0; i < b.x.size(); i++) points += include(b.x[i], b.lo[i]) + include(b.x[i], b.hi[i]);
  if (points == 0) {
    xlo = 0;
    xhi = 1;
    ylo = chart.log_y ? 1 : 0;
    yhi = chart.log_y ? 10 : 1;
  }
  if (xhi == xlo) {
    xlo -= 1;
    xhi += 1;
  }
  pad_range(&ylo, &yhi, 0.05, chart.log_y);
  double xpad = (xhi - xlo) * 0.02;

  const double right = legend.height > 0 && !legend.below ? legend.width + f : 0;
  const double below = legend.below ? legend.height + f * 0.5 : 0;
  Rect area{f * 0.5, top, size.width - f * 1.0 - right, size.height - top - f * 0.5 - below};
  AxisSpec xa{chart.x_title, xlo - xpad, xhi + xpad, false, false, 1, true, {}};
  AxisSpec ya{chart.y_title, ylo, yhi, chart.log_y, chart.symlog_y, chart.symlog_linthresh, false, {}};
  Axes ax(c, area, xa, ya, f);
  ax.draw_grid();

  cairo_t* cr = c.cr();
  ax.clip();
  const double lw = std::max(1.5, f / 6);
  cairo_api().set_line_join(cr, CAIRO_LINE_JOIN_ROUND);
  // Bands: one polygon per run of steps where both curves are drawable, along lo and back along hi.
  for (const LineBand& b : chart.bands) {
    c.set_color(b.color.r, b.color.g, b.color.b, b.alpha);
    for (size_t start = 0; start < b.x.size();) {
      size_t end = start;
      while (end < b.x.size() && drawable(b.lo[end]) && drawable(b.hi[end])) end++;
      if (end > start) {
        cairo_api().move_to(cr, ax.px(b.x[start]), ax.py(b.lo[start]));
        for (size_t i = start + 1; i < end; i++) cairo_api().line_to(cr, ax.px(b.x[i]), ax.py(b.lo[i]));
        for (size_t i = end; i-- > start;) cairo_api().line_to(cr, ax.px(b.x[i]), ax.py(b.hi[i]));
        cairo_api().close_path(cr);
        cairo_api().fill(cr);
      }
      start = end + 1;
    }
  }
  for (const LineSeries& s : chart.series) {
    c.set_color(s.color.r, s.color.g, s.color.b, s.alpha);
    cairo_api().set_line_width(cr, lw);
    set_dash(c, s.dash, lw);
    bool pen_down = false;
    size_t n = std::min(s.x.size(), s.y.size());
    for (size_t i = 0; i < n; i++) {
      double y = s.y[i];
      if (!std::isfinite(y) || (chart.log_y && y <= 0)) {
        pen_down = false;  // a gap, not a line through a missing value
        continue;
      }
      if (pen_down) cairo_api().line_to(cr, ax.px(s.x[i]), ax.py(y));
      else cairo_api().move_to(cr, ax.px(s.x[i]), ax.py(y));
      pen_down = true;
    }
    cairo_api().stroke(cr);
    set_dash(c, Dash::Solid, lw);
    // Markers at every saved step when they are few enough to see (so single points show too),
    // else at about kMarkersPerLine of them, staggered so that lines on top of each other still
    // show each one's marker.
    if (!s.markers) continue;
    const size_t every = n <= kAllMarkersUpTo ? 1 : (n + kMarkersPerLine - 1) / kMarkersPerLine;
    const size_t first = every == 1 ? 0 : (static_cast<size_t>(&s - chart.series.data()) * 3) % every;
    for (size_t i = first; i < n; i += every) {
      double y = s.y[i];
      if (!std::isfinite(y) || (chart.log_y && y <= 0)) continue;
      draw_marker(c, s.marker, ax.px(s.x[i]), ax.py(y), lw * 1.4);
    }
  }
  ax.unclip();
  ax.draw_frame();
  if (points == 0) {
    c.set_color(0.4, 0.4, 0.4);
    c.text(ax.plot().x + ax.plot().w / 2, ax.plot().y + ax.plot().h / 2, "no data", f * 1.2, HAlign::Center,
           VAlign::Middle);
  }
  if (left_out > 0)
    ax.draw_note(std::to_string(left_out) +
                 (chart.log_y ? " non-positive or NaN/Inf values left out" : " NaN/Inf values left out"));
  if (legend.below) draw_legend(c, chart.legend, legend, f * 0.5, area.y + area.h + f * 0.5, legend.height);
  else if (legend.height > 0)
    draw_legend(c, chart.legend, legend, size.width - legend.width - f * 0.5, ax.plot().y, ax.plot().h);
  c.finish();
}

}  // namespace trialdb::plot
