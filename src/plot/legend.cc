#include "src/plot/legend.h"

#include <algorithm>
#include <cmath>

#include "src/plot/axes.h"
#include "src/plot/cairo_api.h"

namespace trialdb::plot {

namespace {

constexpr double kRightShare = 0.25;  // of the image width, at most, for a legend on the right
constexpr double kRowHeight = 1.45;   // in fonts
constexpr double kSwatch = 2.0;       // the line or box before a label, in fonts
constexpr double kGap = 0.5;          // between swatch and label, in fonts

double entry_width(const LegendEntry& e, double font) {
  return measure_text(e.label, font, e.heading) + (e.heading ? 0 : font * (kSwatch + kGap));
}

// Rows the entries take in `columns` columns: a heading starts a row of its own.
int rows_needed(const std::vector<LegendEntry>& entries, int columns) {
  int rows = 0, in_row = columns;
  for (const LegendEntry& e : entries) {
    if (e.heading) {
      rows++;
      in_row = columns;
    } else if (in_row == columns) {
      rows++;
      in_row = 1;
    } else {
      in_row++;
    }
  }
  return rows;
}

void draw_entry(Canvas& c, const LegendEntry& e, double x, double cy, double width, double font) {
  cairo_t* cr = c.cr();
  if (e.heading) {
    c.set_color(0.1, 0.1, 0.1);
    c.text(x, cy, c.fit_text(e.label, font, width, true, Canvas::Cut::Middle), font, HAlign::Left, VAlign::Middle,
           true);
    return;
  }
  const double swatch = font * kSwatch;
  c.set_color(e.color.r, e.color.g, e.color.b);
  if (e.kind == LegendEntry::Line) {
    cairo_api().set_line_width(cr, 2);
    set_dash(c, e.dash, 2);
    cairo_api().move_to(cr, x, cy);
    cairo_api().line_to(cr, x + swatch, cy);
    cairo_api().stroke(cr);
    set_dash(c, Dash::Solid, 2);
    draw_marker(c, e.marker, x + swatch / 2, cy, font * 0.28);
  } else if (e.kind == LegendEntry::Box) {
    cairo_api().rectangle(cr, x + swatch * 0.2, cy - font * 0.4, swatch * 0.6, font * 0.8);
    cairo_api().fill(cr);
  } else {
    draw_marker(c, e.marker == Marker::None ? Marker::Circle : e.marker, x + swatch / 2, cy, font * 0.35);
  }
  c.set_color(0.1, 0.1, 0.1);
  const double tx = x + swatch + font * kGap;
  // Both ends kept: names share prefixes (gradient/...) and differ at their ends.
  c.text(tx, cy, c.fit_text(e.label, font, width - (tx - x), false, Canvas::Cut::Middle), font, HAlign::Left,
         VAlign::Middle);
}

}  // namespace

LegendLayout layout_legend(const std::vector<LegendEntry>& entries, double font, double image_width) {
  LegendLayout l;
  if (entries.empty()) return l;
  l.font = font;
  l.row = font * kRowHeight;
  double widest = 0;
  for (const LegendEntry& e : entries) widest = std::max(widest, entry_width(e, font));
  if (widest + font <= image_width * kRightShare) {
    l.width = l.column_width = widest + font;
    l.height = l.row * static_cast<double>(entries.size());
    return l;
  }
  l.below = true;
  const double usable = image_width - font;
  l.columns = std::max(1, static_cast<int>(usable / std::min(widest + font * 1.5, usable)));
  l.column_width = usable / l.columns;
  l.width = usable;
  l.height = l.row * rows_needed(entries, l.columns);
  return l;
}

void draw_legend(Canvas& c, const std::vector<LegendEntry>& entries, const LegendLayout& l, double x, double y,
                 double max_height) {
  cairo_api().save(c.cr());
  const int fit_rows = static_cast<int>(std::max(1.0, std::floor(max_height / l.row)));
  const int total_rows = rows_needed(entries, l.columns);
  // When some do not fit, the last row says how many were left out.
  const int rows = total_rows <= fit_rows ? total_rows : fit_rows - 1;
  int row = -1, in_row = l.columns;
  size_t shown = 0;
  for (const LegendEntry& e : entries) {
    if (e.heading || in_row == l.columns) {
      if (row + 1 >= rows) break;
      row++;
      in_row = 0;
    }
    const double cy = y + l.row * row + l.row / 2;
    draw_entry(c, e, x + l.column_width * in_row, cy, e.heading ? l.width : l.column_width - l.font * 0.5, l.font);
    in_row = e.heading ? l.columns : in_row + 1;
    shown++;
  }
  if (shown < entries.size()) {
    c.set_color(0.3, 0.3, 0.3);
    c.text(x, y + l.row * (row + 1) + l.row / 2, "+ " + std::to_string(entries.size() - shown) + " more", l.font,
           HAlign::Left, VAlign::Middle);
  }
  cairo_api().restore(c.cr());
}

}  // namespace trialdb::plot
