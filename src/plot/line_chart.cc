// Line chart: values over steps, one line per series over filled bands, legend on the right.
#include <algorithm>
#include <cmath>
#include <limits>

#include "src/plot/chart.h"

namespace trialdb::plot {

double draw_title(Canvas& c, const std::string& title, double font) {
  double top = font * 0.8;
  if (title.empty()) return top;
  c.set_color(0.05, 0.05, 0.05);
  c.text(c.width() / 2.0, top, c.fit_text(title, font * 1.25, c.width() - 2 * font), font * 1.25,
         HAlign::Center, VAlign::Top, true);
  return top + font * 2.2;
}

void render_line_chart(const LineChart& chart, const std::string& path, ImageSize size) {
  Canvas c(path, size.width, size.height);
  const double f = base_font_size(size.width, size.height);
  double top = draw_title(c, chart.title, f);

  double xlo = std::numeric_limits<double>::infinity(), xhi = -xlo, ylo = xlo, yhi = -xlo;
  size_t left_out = 0, points = 0;
  const auto drawable = [&](double y) { return std::isfinite(y) && !(chart.log_y && y <= 0); };
  const auto include = [&](double x, double y) {
    if (!drawable(y)) return false;
    xlo = std::min(xlo, x); xhi = std::max(xhi, x);
    ylo = std::min(ylo, y); yhi = std::max(yhi, y);
    return true;
  };
  for (const LineSeries& s : chart.series)
    for (size_t i = 0; i < s.x.size() && i < s.y.size(); i++) {
      if (include(s.x[i], s.y[i])) points++;
      else left_out++;
    }
  for (const LineBand& b : chart.bands)
    for (size_t i = 0; i < b.x.size(); i++) points += include(b.x[i], b.lo[i]) + include(b.x[i], b.hi[i]);
  if (points == 0) { xlo = 0; xhi = 1; ylo = chart.log_y ? 1 : 0; yhi = chart.log_y ? 10 : 1; }
  if (xhi == xlo) { xlo -= 1; xhi += 1; }
  pad_range(&ylo, &yhi, 0.05, chart.log_y);
  double xpad = (xhi - xlo) * 0.02;

  double legend_w = chart.legend.empty() ? 0 : legend_width(c, chart.legend, f * 0.9, size.width * 0.35);
  Rect area{f * 0.5, top, size.width - f * 1.0 - (legend_w > 0 ? legend_w + f : 0), size.height - top - f * 0.5};
  AxisSpec xa{chart.x_title, xlo - xpad, xhi + xpad, false, true, {}};
  AxisSpec ya{chart.y_title, ylo, yhi, chart.log_y, false, {}};
  Axes ax(c, area, xa, ya, f);
  ax.draw_grid();

  cairo_t* cr = c.cr();
  ax.clip();
  const double lw = std::max(1.5, f / 6);
  cairo_set_line_join(cr, CAIRO_LINE_JOIN_ROUND);
  // Bands: one polygon per run of steps where both curves are drawable, along lo and back along hi.
  for (const LineBand& b : chart.bands) {
    c.set_color(b.color.r, b.color.g, b.color.b, b.alpha);
    for (size_t start = 0; start < b.x.size();) {
      size_t end = start;
      while (end < b.x.size() && drawable(b.lo[end]) && drawable(b.hi[end])) end++;
      if (end > start) {
        cairo_move_to(cr, ax.px(b.x[start]), ax.py(b.lo[start]));
        for (size_t i = start + 1; i < end; i++) cairo_line_to(cr, ax.px(b.x[i]), ax.py(b.lo[i]));
        for (size_t i = end; i-- > start;) cairo_line_to(cr, ax.px(b.x[i]), ax.py(b.hi[i]));
        cairo_close_path(cr);
        cairo_fill(cr);
      }
      start = end + 1;
    }
  }
  for (const LineSeries& s : chart.series) {
    c.set_color(s.color.r, s.color.g, s.color.b);
    cairo_set_line_width(cr, lw);
    set_dash(c, s.dash, lw);
    bool pen_down = false;
    size_t n = std::min(s.x.size(), s.y.size());
    for (size_t i = 0; i < n; i++) {
      double y = s.y[i];
      if (!std::isfinite(y) || (chart.log_y && y <= 0)) {
        pen_down = false;  // a gap, not a line through a missing value
        continue;
      }
      if (pen_down) cairo_line_to(cr, ax.px(s.x[i]), ax.py(y));
      else cairo_move_to(cr, ax.px(s.x[i]), ax.py(y));
      pen_down = true;
    }
    cairo_stroke(cr);
    set_dash(c, 0, lw);
    // Dots at the saved steps when they are few enough to see, so single points show too.
    if (n <= 80)
      for (size_t i = 0; i < n; i++) {
        double y = s.y[i];
        if (!std::isfinite(y) || (chart.log_y && y <= 0)) continue;
        cairo_arc(cr, ax.px(s.x[i]), ax.py(y), lw * 1.3, 0, 2 * M_PI);
        cairo_fill(cr);
      }
  }
  ax.unclip();
  ax.draw_frame();
  if (points == 0) {
    c.set_color(0.4, 0.4, 0.4);
    c.text(ax.plot().x + ax.plot().w / 2, ax.plot().y + ax.plot().h / 2, "no data", f * 1.2, HAlign::Center,
           VAlign::Middle);
  }
  if (left_out > 0) {
    c.set_color(0.4, 0.4, 0.4);
    std::string note = std::to_string(left_out) + (chart.log_y ? " non-positive or NaN/Inf values left out"
                                                              : " NaN/Inf values left out");
    c.text(ax.plot().x + ax.plot().w - 4, ax.plot().y + 4, note, f * 0.8, HAlign::Right, VAlign::Top);
  }
  if (legend_w > 0)
    draw_legend(c, chart.legend, size.width - legend_w - f * 0.5, ax.plot().y, legend_w, ax.plot().h, f * 0.9);
  c.finish();
}

}  // namespace trialdb::plot
