// Timeline: one row per category (a rule, or rule and tensor), a marker at each step where it
// has findings; several findings at one step make a bigger marker.
#include <algorithm>
#include <cmath>

#include "src/plot/chart.h"
#include "src/plot/cairo_api.h"

namespace trialdb::plot {

void render_timeline(const Timeline& t, const std::string& path, ImageSize size) {
  const double f = base_font_size(size.width, size.height);
  const LegendLayout legend = layout_legend(t.legend, f * 0.9, size.width);
  size.height = fitted_height(size, legend, f);
  Canvas c(path, size.width, size.height);
  double top = draw_title(c, t.title, f);
  cairo_t* cr = c.cr();

  double xlo = t.x_lo, xhi = t.x_hi;
  for (const TimelineMark& m : t.marks) {
    xlo = std::min(xlo, m.x);
    xhi = std::max(xhi, m.x);
  }
  if (xhi <= xlo) {
    xlo -= 1;
    xhi += 1;
  }
  double pad = (xhi - xlo) * 0.03;
  const double right = legend.height > 0 && !legend.below ? legend.width + f : 0;
  const double below = legend.below ? legend.height + f * 0.5 : 0;
  Rect area{f * 0.5, top, size.width - f - right, size.height - top - f * 0.5 - below};
  std::vector<std::string> rows = t.rows.empty() ? std::vector<std::string>{"(no findings)"} : t.rows;
  AxisSpec xa{t.x_title, xlo - pad, xhi + pad, false, false, 1, true, {}};
  AxisSpec ya{"", 0, 0, false, false, 1, false, rows};
  Axes ax(c, area, xa, ya, f);
  ax.draw_grid();
  // Alternate row shading so a marker is easy to follow to its row label.
  for (size_t r = 0; r < rows.size(); r += 2) {
    c.set_color(0.5, 0.5, 0.5, 0.07);
    double y0 = ax.py(r - 0.5), y1 = ax.py(r + 0.5);
    cairo_api().rectangle(cr, ax.plot().x, std::min(y0, y1), ax.plot().w, std::fabs(y1 - y0));
    cairo_api().fill(cr);
  }
  ax.clip();
  double row_h = ax.plot().h / rows.size();
  double r0 = std::clamp(row_h * 0.22, 2.5, f * 0.45);
  for (const TimelineMark& m : t.marks) {
    double r = r0 * (1 + 0.35 * std::log2(std::max(1, m.count)));
    r = std::min(r, row_h * 0.48);
    c.set_color(m.color.r, m.color.g, m.color.b, 0.85);
    cairo_api().arc(cr, ax.px(m.x), ax.py(m.row), r, 0, 2 * M_PI);
    cairo_api().fill_preserve(cr);
    c.set_color(0.1, 0.1, 0.1, 0.6);
    cairo_api().set_line_width(cr, 0.8);
    cairo_api().stroke(cr);
  }
  ax.unclip();
  ax.draw_frame();
  if (t.marks.empty()) {
    c.set_color(0.4, 0.4, 0.4);
    c.text(ax.plot().x + ax.plot().w / 2, ax.plot().y + ax.plot().h / 2, "no findings", f * 1.2, HAlign::Center,
           VAlign::Middle);
  }
  if (legend.below) draw_legend(c, t.legend, legend, f * 0.5, area.y + area.h + f * 0.5, legend.height);
  else if (legend.height > 0)
    draw_legend(c, t.legend, legend, size.width - legend.width - f * 0.5, ax.plot().y, ax.plot().h);
  c.finish();
}

}  // namespace trialdb::plot
