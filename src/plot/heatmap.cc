// Heat map: a histogram per step as one column of cells; colour = how many elements fall in the
// bin. Empty bins stay white so the shape of the distribution stands out. Panels (one per
// trial) are stacked, each with its colour bar or all sharing one; marked columns (EVAL steps)
// get a strip above the plot.
#include <algorithm>
#include <cmath>

#include "src/plot/chart.h"
#include "src/plot/cairo_api.h"

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

// A colour bar: a strip beside the plot areas from `top` to `bottom`, its ticks and labels.
struct ColorBar {
  double max_count = 0;
  std::vector<Tick> ticks;
};

ColorBar color_bar(double max_count, bool log) {
  ColorBar bar{max_count, {}};
  if (max_count <= 0) return bar;
  if (log) {
    for (double v = 1; v <= max_count * 1.0001; v *= 10) bar.ticks.push_back({v, format_number(v, 6)});
    // The top of the bar, as a whole number: a bin's count is fractional where a bucket spans bins.
    if (max_count >= 3 && bar.ticks.back().value < max_count / 3)
      bar.ticks.push_back({max_count, format_number(std::round(max_count), 6)});
  } else {
    bar.ticks = linear_ticks(0, max_count, 6, true);
  }
  return bar;
}

void draw_color_bar(Canvas& c, const ColorBar& bar, bool log, double x, double width, double top, double bottom,
                    double font) {
  const double h = bottom - top;
  if (h <= 10 || bar.max_count <= 0) return;
  cairo_t* cr = c.cr();
  constexpr int kSteps = 128;
  for (int i = 0; i < kSteps; i++) {
    Rgb rgb = viridis((i + 0.5) / kSteps);
    c.set_color(rgb.r, rgb.g, rgb.b);
    cairo_api().rectangle(cr, x, bottom - h * (i + 1) / kSteps - 0.5, width, h / kSteps + 1);
    cairo_api().fill(cr);
  }
  c.set_color(0.2, 0.2, 0.2);
  cairo_api().set_line_width(cr, 1);
  cairo_api().rectangle(cr, x + 0.5, top + 0.5, width, h);
  cairo_api().stroke(cr);
  for (const Tick& t : bar.ticks) {
    double y = bottom - h * color_position(t.value, bar.max_count, log);
    cairo_api().move_to(cr, x + width, y);
    cairo_api().line_to(cr, x + width + 4, y);
    cairo_api().stroke(cr);
    c.text(x + width + 6, y, t.label, font * 0.9, HAlign::Left, VAlign::Middle);
  }
}

const Rgb kMarkColor{0.90, 0.40, 0.05};

}  // namespace

void render_heatmap(const HeatMap& map, const std::string& path, ImageSize size) {
  Canvas c(path, size.width, size.height);
  const double f = base_font_size(size.width, size.height);
  double top = draw_title(c, map.title, f);
  cairo_t* cr = c.cr();

  std::vector<ColorBar> bars;
  double shared_max = 0;
  for (const HeatPanel& p : map.panels) {
    double max_count = 0;
    for (double v : p.counts) max_count = std::max(max_count, v);
    bars.push_back(color_bar(max_count, map.log_color));
    shared_max = std::max(shared_max, max_count);
  }
  if (map.shared_color)
    for (ColorBar& b : bars) b = color_bar(shared_max, map.log_color);

  // Colour bars on the right: a strip, its tick labels, and the bar's title turned upright.
  const double bar_w = f * 1.2;
  double tick_w = 0;
  for (const ColorBar& b : bars)
    for (const Tick& t : b.ticks) tick_w = std::max(tick_w, c.text_width(t.label, f * 0.9));
  const double bar_x = size.width - (bar_w + 6 + tick_w + f * 2.0);

  size_t n = std::max<size_t>(map.panels.size(), 1);
  double avail_h = size.height - top - f * 0.5;
  double panel_gap = f * 0.6;
  double panel_title_h = f * 1.5;
  const double mark_h = f * 0.45;  // the strip above a plot that marks columns
  double each_h = (avail_h - panel_gap * (n - 1)) / n;
  double plot_top = top, plot_bottom = top;

  for (size_t pi = 0; pi < map.panels.size(); pi++) {
    const HeatPanel& p = map.panels[pi];
    const bool marks = std::find(p.marked.begin(), p.marked.end(), true) != p.marked.end();
    double y0 = top + pi * (each_h + panel_gap);
    bool last = pi + 1 == map.panels.size();
    size_t bins = p.y_edges.size() >= 2 ? p.y_edges.size() - 1 : 0;
    std::vector<double> xe = column_edges(p.x);
    AxisSpec xa{last ? map.x_title : "",
                xe.empty() || p.x.empty() ? 0 : xe.front(),
                p.x.empty() ? 1 : xe.back(),
                false,
                false,
                1,
                true,
                {}};
    AxisSpec ya{map.y_title, bins ? p.y_edges.front() : 0, bins ? p.y_edges.back() : 1, false, false, 1, false, {}};
    if (ya.hi <= ya.lo) pad_range(&ya.lo, &ya.hi, 0, false);
    const double head = (p.title.empty() && !marks ? 0 : panel_title_h) + (marks ? mark_h : 0);
    Rect area{f * 0.5, y0 + head, bar_x - f * 1.5, each_h - head};
    Axes ax(c, area, xa, ya, f);
    const ColorBar& bar = bars[pi];
    ax.clip();
    for (size_t col = 0; col < p.x.size(); col++) {
      double x0 = ax.px(xe[col]), x1 = ax.px(xe[col + 1]);
      for (size_t b = 0; b < bins; b++) {
        double v = p.counts[col * bins + b];
        if (v <= 0) continue;
        Rgb rgb = viridis(color_position(v, bar.max_count, map.log_color));
        c.set_color(rgb.r, rgb.g, rgb.b);
        double ya0 = ax.py(p.y_edges[b]), ya1 = ax.py(p.y_edges[b + 1]);
        // Overlap neighbours by half a pixel so no hairline seams show between cells.
        cairo_api().rectangle(cr, x0 - 0.25, ya1 - 0.25, x1 - x0 + 0.5, ya0 - ya1 + 0.5);
        cairo_api().fill(cr);
      }
    }
    ax.unclip();
    ax.draw_frame();
    double key_w = 0;
    if (marks) {
      // The marked columns as a strip just above the frame, and a key at the right of the title row.
      c.set_color(kMarkColor.r, kMarkColor.g, kMarkColor.b);
      for (size_t col = 0; col < p.x.size() && col < p.marked.size(); col++)
        if (p.marked[col]) {
          double x0 = ax.px(xe[col]), x1 = ax.px(xe[col + 1]);
          cairo_api().rectangle(cr, x0, ax.plot().y - mark_h, std::max(1.0, x1 - x0), mark_h - 1);
        }
      cairo_api().fill(cr);
      key_w = c.text_width(map.mark_label, f * 0.85) + f * 1.2;
      const double key_x = ax.plot().x + ax.plot().w - key_w;
      cairo_api().rectangle(cr, key_x, y0 + f * 0.35, f * 0.8, f * 0.8);
      cairo_api().fill(cr);
      c.set_color(0.1, 0.1, 0.1);
      c.text(key_x + f * 1.1, y0 + f * 0.75, map.mark_label, f * 0.85, HAlign::Left, VAlign::Middle);
    }
    if (!p.title.empty()) {
      c.set_color(0.1, 0.1, 0.1);
      c.text(ax.plot().x, y0 + f * 0.2, c.fit_text(p.title, f, ax.plot().w - key_w - f, true, Canvas::Cut::Middle), f,
             HAlign::Left, VAlign::Top, true);
    }
    if (p.x.empty()) {
      c.set_color(0.4, 0.4, 0.4);
      c.text(ax.plot().x + ax.plot().w / 2, ax.plot().y + ax.plot().h / 2, "no data", f * 1.2, HAlign::Center,
             VAlign::Middle);
    }
    if (!p.note.empty()) ax.draw_note(p.note);
    if (!map.shared_color)
      draw_color_bar(c, bar, map.log_color, bar_x, bar_w, ax.plot().y, ax.plot().y + ax.plot().h, f);
    if (pi == 0) plot_top = ax.plot().y;
    plot_bottom = ax.plot().y + ax.plot().h;
  }
  if (map.shared_color && !bars.empty())
    draw_color_bar(c, bars[0], map.log_color, bar_x, bar_w, plot_top, plot_bottom, f);
  c.set_color(0.2, 0.2, 0.2);
  if (shared_max > 0)
    c.text(size.width - f * 0.3, (plot_top + plot_bottom) / 2, map.color_title, f, HAlign::Center, VAlign::Bottom, true,
           90);
  c.finish();
}

}  // namespace trialdb::plot
