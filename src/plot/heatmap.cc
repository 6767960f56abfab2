// Heat map: a histogram per step as one column of cells; colour = how many elements fall in the
// bin. Empty bins stay white so the shape of the distribution stands out. Panels (one per
// trial) are stacked and share one colour bar.
#include <algorithm>
#include <cmath>

#include "src/plot/chart.h"

namespace trialdb::plot {

namespace {

// Cell edges in x: halfway to the neighbouring columns (steps need not be evenly spaced).
std::vector<double> column_edges(const std::vector<double>& x) {
  std::vector<double> e(x.size() + 1);
  if (x.empty()) return e;
  if (x.size() == 1) {
    e[0] = x[0] - 0.5;
    e[1] = x[0] + 0.5;
    return e;
  }
  for (size_t i = 1; i < x.size(); i++) e[i] = (x[i - 1] + x[i]) / 2;
  e[0] = x[0] - (e[1] - x[0]);
  e[x.size()] = x.back() + (x.back() - e[x.size() - 1]);
  return e;
}

double color_position(double count, double max_count, bool log) {
  if (max_count <= 0) return 0;
  return log ? std::log1p(count) / std::log1p(max_count) : count / max_count;
}

}  // namespace

void render_heatmap(const HeatMap& map, const std::string& path, ImageSize size) {
  Canvas c(path, size.width, size.height);
  const double f = base_font_size(size.width, size.height);
  double top = draw_title(c, map.title, f);
  cairo_t* cr = c.cr();

  double max_count = 0;
  for (const HeatPanel& p : map.panels)
    for (double v : p.counts) max_count = std::max(max_count, v);

  // Colour bar on the right: a strip, its ticks and its title.
  const double bar_w = f * 1.2;
  std::vector<Tick> bar_ticks;
  if (max_count > 0) {
    if (map.log_color) {
      for (double v = 1; v <= max_count * 1.0001; v *= 10) bar_ticks.push_back({v, format_number(v, 6)});
      if (max_count >= 3 && bar_ticks.back().value < max_count / 2)
        bar_ticks.push_back({max_count, format_number(max_count, 6)});
    } else {
      bar_ticks = linear_ticks(0, max_count, 6, true);
    }
  }
  double tick_w = 0;
  for (const Tick& t : bar_ticks) tick_w = std::max(tick_w, c.text_width(t.label, f * 0.9));
  double bar_area_w = bar_w + 6 + tick_w + f * 2.0;  // strip, tick labels, rotated title
  double bar_x = size.width - bar_area_w;

  size_t n = std::max<size_t>(map.panels.size(), 1);
  double avail_h = size.height - top - f * 0.5;
  double panel_gap = f * 0.6;
  double panel_title_h = f * 1.5;
  double each_h = (avail_h - panel_gap * (n - 1)) / n;
  double plot_top = top, plot_bottom = top;

  for (size_t pi = 0; pi < map.panels.size(); pi++) {
    const HeatPanel& p = map.panels[pi];
    double y0 = top + pi * (each_h + panel_gap);
    bool last = pi + 1 == map.panels.size();
    size_t bins = p.y_edges.size() >= 2 ? p.y_edges.size() - 1 : 0;
    std::vector<double> xe = column_edges(p.x);
    AxisSpec xa{last ? map.x_title : "", xe.empty() || p.x.empty() ? 0 : xe.front(),
                p.x.empty() ? 1 : xe.back(), false, true, {}};
    AxisSpec ya{map.y_title, bins ? p.y_edges.front() : 0, bins ? p.y_edges.back() : 1, false, false, {}};
    if (ya.hi <= ya.lo) pad_range(&ya.lo, &ya.hi, 0, false);
    Rect area{f * 0.5, y0 + (p.title.empty() ? 0 : panel_title_h), bar_x - f * 1.5,
              each_h - (p.title.empty() ? 0 : panel_title_h)};
    Axes ax(c, area, xa, ya, f);
    if (!p.title.empty()) {
      c.set_color(0.1, 0.1, 0.1);
      c.text(ax.plot().x, y0 + f * 0.2, c.fit_text(p.title, f, ax.plot().w), f, HAlign::Left, VAlign::Top, true);
    }
    ax.clip();
    for (size_t col = 0; col < p.x.size(); col++) {
      double x0 = ax.px(xe[col]), x1 = ax.px(xe[col + 1]);
      for (size_t b = 0; b < bins; b++) {
        double v = p.counts[col * bins + b];
        if (v <= 0) continue;
        Rgb rgb = viridis(color_position(v, max_count, map.log_color));
        c.set_color(rgb.r, rgb.g, rgb.b);
        double ya0 = ax.py(p.y_edges[b]), ya1 = ax.py(p.y_edges[b + 1]);
        // Overlap neighbours by half a pixel so no hairline seams show between cells.
        cairo_rectangle(cr, x0 - 0.25, ya1 - 0.25, x1 - x0 + 0.5, ya0 - ya1 + 0.5);
        cairo_fill(cr);
      }
    }
    ax.unclip();
    ax.draw_frame();
    if (p.x.empty()) {
      c.set_color(0.4, 0.4, 0.4);
      c.text(ax.plot().x + ax.plot().w / 2, ax.plot().y + ax.plot().h / 2, "no data", f * 1.2, HAlign::Center,
             VAlign::Middle);
    }
    if (!p.note.empty()) {
      c.set_color(0.4, 0.4, 0.4);
      c.text(ax.plot().x + ax.plot().w - 4, ax.plot().y + 4, p.note, f * 0.8, HAlign::Right, VAlign::Top);
    }
    if (pi == 0) plot_top = ax.plot().y;
    plot_bottom = ax.plot().y + ax.plot().h;
  }

  // The colour bar spans all panels' plot areas.
  double bh = plot_bottom - plot_top;
  if (bh > 10 && max_count > 0) {
    const int steps = 128;
    for (int i = 0; i < steps; i++) {
      Rgb rgb = viridis((i + 0.5) / steps);
      c.set_color(rgb.r, rgb.g, rgb.b);
      cairo_rectangle(cr, bar_x, plot_bottom - bh * (i + 1) / steps - 0.5, bar_w, bh / steps + 1);
      cairo_fill(cr);
    }
    c.set_color(0.2, 0.2, 0.2);
    cairo_set_line_width(cr, 1);
    cairo_rectangle(cr, bar_x + 0.5, plot_top + 0.5, bar_w, bh);
    cairo_stroke(cr);
    for (const Tick& t : bar_ticks) {
      double y = plot_bottom - bh * color_position(t.value, max_count, map.log_color);
      cairo_move_to(cr, bar_x + bar_w, y);
      cairo_line_to(cr, bar_x + bar_w + 4, y);
      cairo_stroke(cr);
      c.text(bar_x + bar_w + 6, y, t.label, f * 0.9, HAlign::Left, VAlign::Middle);
    }
    c.text(size.width - f * 0.3, plot_top + bh / 2, map.color_title, f, HAlign::Center, VAlign::Bottom, true, 90);
  }
  c.finish();
}

}  // namespace trialdb::plot
