#include "src/plot/axes.h"

#include <algorithm>
#include <cmath>

#include "kernels/histogram_bins.h"
#include "src/plot/cairo_api.h"

namespace trialdb::plot {

double base_font_size(int width, int height) { return std::clamp(std::min(width, height) / 38.0, 9.0, 18.0); }

Axes::Axes(Canvas& canvas, Rect area, AxisSpec x, AxisSpec y, double font_size)
    : c_(canvas), x_(std::move(x)), y_(std::move(y)), font_(font_size) {
  if (!x_.categories.empty()) {
    x_.lo = -0.5;
    x_.hi = x_.categories.size() - 0.5;
  }
  if (!y_.categories.empty()) {
    y_.lo = -0.5;
    y_.hi = y_.categories.size() - 0.5;
  }
  const double f = font_;
  // Bottom: tick labels, then the x title. Top: half a label so the top tick label fits.
  double bottom = f * 1.2 + 6 + (x_.title.empty() ? 0 : f * 1.5);
  double top = f * 0.7;
  double plot_h = std::max(20.0, area.h - top - bottom);
  yticks_ = ticks_for(y_, plot_h, false);
  double label_w = 0;
  for (const Tick& t : yticks_) label_w = std::max(label_w, c_.text_width(t.label, f));
  // Category names (findings' rule and tensor) may take half the width; numbers need less.
  label_w = std::min(label_w, area.w * (y_.categories.empty() ? 0.4 : 0.5));
  double left = label_w + 8 + (y_.title.empty() ? 0 : f * 1.6);
  double right = f * 1.2;  // room for half of the last x tick label
  plot_ = {area.x + left, area.y + top, std::max(20.0, area.w - left - right), plot_h};
  xticks_ = ticks_for(x_, plot_.w, true);
}

std::vector<Tick> Axes::ticks_for(const AxisSpec& a, double length_px, bool horizontal) const {
  if (!a.categories.empty()) {
    std::vector<Tick> out;
    for (size_t i = 0; i < a.categories.size(); i++) out.push_back({double(i), a.categories[i]});
    return out;
  }
  int max_ticks;
  if (horizontal) {
    // Leave at least two characters between the widest labels.
    double w = std::max(c_.text_width(format_number(a.lo), font_), c_.text_width(format_number(a.hi), font_));
    w = std::max(w, c_.text_width("0.0000", font_));
    max_ticks = static_cast<int>(length_px / (w + 2 * font_));
  } else {
    max_ticks = static_cast<int>(length_px / (font_ * 2.2));
  }
  max_ticks = std::clamp(max_ticks, 2, 12);
  if (a.symlog) return symlog_ticks(a.lo, a.hi, a.linthresh, max_ticks);
  return a.log ? log_ticks(a.lo, a.hi, max_ticks) : linear_ticks(a.lo, a.hi, max_ticks, a.integer);
}

namespace {

double symlog(double v, double linthresh) { return std::copysign(std::log10(1 + std::abs(v) / linthresh), v); }

// Where v lies along the axis, 0 at lo and 1 at hi, in the axis' scale.
double axis_fraction(const AxisSpec& a, double v) {
  if (a.log) return (std::log10(v) - std::log10(a.lo)) / (std::log10(a.hi) - std::log10(a.lo));
  if (a.symlog) return range_fraction(symlog(v, a.linthresh), symlog(a.lo, a.linthresh), symlog(a.hi, a.linthresh));
  return range_fraction(v, a.lo, a.hi);
}

}  // namespace

double Axes::px(double v) const { return plot_.x + axis_fraction(x_, v) * plot_.w; }

double Axes::py(double v) const {
  double t = axis_fraction(y_, v);
  if (!y_.categories.empty()) t = 1 - t;  // first category at the top
  return plot_.y + plot_.h - t * plot_.h;
}

void Axes::draw_grid() {
  cairo_t* cr = c_.cr();
  cairo_api().save(cr);
  c_.set_color(0.90, 0.90, 0.90);
  cairo_api().set_line_width(cr, 1);
  for (const Tick& t : xticks_) {
    double x = std::round(px(t.value)) + 0.5;
    cairo_api().move_to(cr, x, plot_.y);
    cairo_api().line_to(cr, x, plot_.y + plot_.h);
  }
  for (const Tick& t : yticks_) {
    double y = std::round(py(t.value)) + 0.5;
    cairo_api().move_to(cr, plot_.x, y);
    cairo_api().line_to(cr, plot_.x + plot_.w, y);
  }
  cairo_api().stroke(cr);
  cairo_api().restore(cr);
}

void Axes::draw_frame() {
  cairo_t* cr = c_.cr();
  const double f = font_;
  cairo_api().save(cr);
  c_.set_color(0.2, 0.2, 0.2);
  cairo_api().set_line_width(cr, 1);
  cairo_api().rectangle(cr, std::round(plot_.x) + 0.5, std::round(plot_.y) + 0.5, std::round(plot_.w),
                        std::round(plot_.h));
  cairo_api().stroke(cr);
  double bottom = plot_.y + plot_.h;
  for (const Tick& t : xticks_) {
    double x = std::round(px(t.value)) + 0.5;
    cairo_api().move_to(cr, x, bottom);
    cairo_api().line_to(cr, x, bottom + 4);
    cairo_api().stroke(cr);
    c_.text(x, bottom + 6, t.label, f, HAlign::Center, VAlign::Top);
  }
  double max_label = x_.categories.empty() && y_.categories.empty() ? 1e9 : plot_.x - 10;
  for (const Tick& t : yticks_) {
    double y = std::round(py(t.value)) + 0.5;
    cairo_api().move_to(cr, plot_.x - 4, y);
    cairo_api().line_to(cr, plot_.x, y);
    cairo_api().stroke(cr);
    std::string label = y_.categories.empty() ? t.label
                                              : c_.fit_text(t.label, f, max_label - (y_.title.empty() ? 0 : f * 1.6),
                                                            false, Canvas::Cut::Middle);
    c_.text(plot_.x - 7, y, label, f, HAlign::Right, VAlign::Middle);
  }
  if (!x_.title.empty())
    c_.text(plot_.x + plot_.w / 2, bottom + 6 + f * 1.3, x_.title, f * 1.05, HAlign::Center, VAlign::Top, true);
  if (!y_.title.empty()) {
    double label_w = 0;
    for (const Tick& t : yticks_) label_w = std::max(label_w, c_.text_width(t.label, f));
    label_w = std::min(label_w, plot_.x - 8 - f * 1.6);
    c_.text(plot_.x - label_w - 10 - f * 0.2, plot_.y + plot_.h / 2, y_.title, f * 1.05, HAlign::Center, VAlign::Bottom,
            true, 90);
  }
  cairo_api().restore(cr);
}

void Axes::draw_note(const std::string& note) {
  const double size = font_ * 0.8;
  const std::string shown = c_.fit_text(note, size, plot_.w - 8, false, Canvas::Cut::Middle);
  const double w = c_.text_width(shown, size);
  c_.set_color(1, 1, 1, 0.85);
  cairo_api().rectangle(c_.cr(), plot_.x + plot_.w - w - 7, plot_.y + 2, w + 6, size * 1.35);
  cairo_api().fill(c_.cr());
  c_.set_color(0.35, 0.35, 0.35);
  c_.text(plot_.x + plot_.w - 4, plot_.y + 4, shown, size, HAlign::Right, VAlign::Top);
}

void Axes::clip() {
  cairo_api().save(c_.cr());
  cairo_api().rectangle(c_.cr(), plot_.x, plot_.y, plot_.w, plot_.h);
  cairo_api().clip(c_.cr());
}

void Axes::unclip() { cairo_api().restore(c_.cr()); }

void set_dash(Canvas& c, Dash dash, double lw) {
  switch (dash) {
    case Dash::Solid: cairo_api().set_dash(c.cr(), nullptr, 0, 0); return;
    case Dash::Dashed: {
      const double d[] = {lw * 4, lw * 2.5};
      cairo_api().set_dash(c.cr(), d, 2, 0);
      return;
    }
    case Dash::Dotted: {
      const double d[] = {lw * 1, lw * 2};
      cairo_api().set_dash(c.cr(), d, 2, 0);
      return;
    }
    case Dash::DashDot: {
      const double d[] = {lw * 5, lw * 2, lw * 1, lw * 2};
      cairo_api().set_dash(c.cr(), d, 4, 0);
      return;
    }
  }
}

void draw_marker(Canvas& c, Marker marker, double x, double y, double r) {
  cairo_t* cr = c.cr();
  switch (marker) {
    case Marker::None: return;
    case Marker::Circle: cairo_api().arc(cr, x, y, r, 0, 2 * M_PI); break;
    case Marker::Square: cairo_api().rectangle(cr, x - r * 0.85, y - r * 0.85, r * 1.7, r * 1.7); break;
    case Marker::Triangle:
      cairo_api().move_to(cr, x, y - r * 1.2);
      cairo_api().line_to(cr, x + r * 1.1, y + r * 0.8);
      cairo_api().line_to(cr, x - r * 1.1, y + r * 0.8);
      cairo_api().close_path(cr);
      break;
    case Marker::Diamond:
      cairo_api().move_to(cr, x, y - r * 1.25);
      cairo_api().line_to(cr, x + r * 1.1, y);
      cairo_api().line_to(cr, x, y + r * 1.25);
      cairo_api().line_to(cr, x - r * 1.1, y);
      cairo_api().close_path(cr);
      break;
  }
  cairo_api().fill(cr);
}

}  // namespace trialdb::plot
