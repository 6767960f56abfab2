#include "src/plot/canvas.h"

#include <cairo-svg.h>

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>

namespace trialdb::plot {

namespace {
bool ends_with(const std::string& s, const char* suffix) {
  size_t n = std::strlen(suffix);
  if (s.size() < n) return false;
  for (size_t i = 0; i < n; i++)
    if (std::tolower(static_cast<unsigned char>(s[s.size() - n + i])) != suffix[i]) return false;
  return true;
}
}  // namespace

Format format_for_path(const std::string& path) {
  if (ends_with(path, ".png")) return Format::Png;
  if (ends_with(path, ".svg")) return Format::Svg;
  throw Error(Status::invalid("output file must end in .png or .svg").at(path));
}

Canvas::Canvas(const std::string& path, int width, int height)
    : path_(path), format_(format_for_path(path)), width_(width), height_(height) {
  if (width < 100 || height < 100 || width > 20000 || height > 20000)
    throw Error(ErrorKind::kInvalidInput, "image size " + std::to_string(width) + "x" + std::to_string(height) +
                                              " is out of range (100 to 20000 pixels a side)");
  // cairo reports an unwritable file only when it finally writes; find out now instead.
  FILE* probe = std::fopen(path.c_str(), "wb");
  if (!probe) throw Error(ErrorKind::kIo, "cannot write " + path + ": " + std::strerror(errno));
  std::fclose(probe);
  if (format_ == Format::Png) {
    surface_ = cairo_image_surface_create(CAIRO_FORMAT_RGB24, width, height);
  } else {
    surface_ = cairo_svg_surface_create(path.c_str(), width, height);
    cairo_svg_surface_set_document_unit(surface_, CAIRO_SVG_UNIT_PX);
  }
  if (cairo_surface_status(surface_) != CAIRO_STATUS_SUCCESS) {
    std::string why = cairo_status_to_string(cairo_surface_status(surface_));
    cairo_surface_destroy(surface_);
    throw Error(ErrorKind::kIo, "cannot create image " + path + ": " + why);
  }
  cr_ = cairo_create(surface_);
  set_color(1, 1, 1);
  cairo_paint(cr_);
}

Canvas::~Canvas() {
  if (cr_) cairo_destroy(cr_);
  if (surface_) cairo_surface_destroy(surface_);
}

void Canvas::select_font(double size, bool bold) const {
  cairo_select_font_face(cr_, "DejaVu Sans", CAIRO_FONT_SLANT_NORMAL,
                         bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL);
  cairo_set_font_size(cr_, size);
}

double Canvas::text_width(const std::string& s, double size, bool bold) const {
  select_font(size, bold);
  cairo_text_extents_t e;
  cairo_text_extents(cr_, s.c_str(), &e);
  return e.x_advance;
}

std::string Canvas::fit_text(const std::string& s, double size, double max_width) const {
  if (text_width(s, size) <= max_width) return s;
  // Keep the end of the name: tensor names differ at their ends (layer, index).
  std::string tail = s;
  while (!tail.empty()) {
    // Drop one UTF-8 code point from the front.
    size_t k = 1;
    while (k < tail.size() && (static_cast<unsigned char>(tail[k]) & 0xC0) == 0x80) k++;
    tail.erase(0, k);
    std::string candidate = "\xE2\x80\xA6" + tail;  // U+2026 ellipsis
    if (text_width(candidate, size) <= max_width) return candidate;
  }
  return "\xE2\x80\xA6";
}

void Canvas::text(double x, double y, const std::string& s, double size, HAlign h, VAlign v,
                  bool bold, double angle) {
  select_font(size, bold);
  cairo_text_extents_t te;
  cairo_text_extents(cr_, s.c_str(), &te);
  cairo_font_extents_t fe;
  cairo_font_extents(cr_, &fe);
  double dx = h == HAlign::Left ? 0 : h == HAlign::Center ? -te.x_advance / 2 : -te.x_advance;
  // Vertical placement from the font's ascent/descent, so labels in a row share a baseline.
  double dy = v == VAlign::Baseline ? 0
              : v == VAlign::Top    ? fe.ascent
              : v == VAlign::Middle ? (fe.ascent - fe.descent) / 2
                                    : -fe.descent;
  cairo_save(cr_);
  cairo_translate(cr_, x, y);
  cairo_rotate(cr_, -angle * M_PI / 180.0);
  cairo_move_to(cr_, dx, dy);
  cairo_show_text(cr_, s.c_str());
  cairo_restore(cr_);
}

void Canvas::set_color(double r, double g, double b, double a) { cairo_set_source_rgba(cr_, r, g, b, a); }

void Canvas::finish() {
  if (finished_) return;
  finished_ = true;
  cairo_status_t st = cairo_status(cr_);
  if (st != CAIRO_STATUS_SUCCESS) throw Error(ErrorKind::kIo, "drawing " + path_ + " failed: " + cairo_status_to_string(st));
  if (format_ == Format::Png) {
    st = cairo_surface_write_to_png(surface_, path_.c_str());
  } else {
    cairo_surface_finish(surface_);
    st = cairo_surface_status(surface_);
  }
  if (st != CAIRO_STATUS_SUCCESS) throw Error(ErrorKind::kIo, "cannot write " + path_ + ": " + cairo_status_to_string(st));
}

}  // namespace trialdb::plot
