#include "src/plot/canvas.h"

#include <cairo-svg.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

#include "schema/utf8.h"
#include "src/plot/cairo_api.h"

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
  // Something other than a regular file (a FIFO that nobody reads, a device) is refused before
  // opening it, which would wait for a reader for ever.
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (std::filesystem::exists(status) && !std::filesystem::is_regular_file(status))
    throw Error(ErrorKind::kIo, "cannot write " + path +
                                    ": it exists and is not a regular file (a FIFO, a device or "
                                    "a folder); give a new or a regular file");
  // cairo reports an unwritable file only when it finally writes; find out now instead.
  FILE* probe = std::fopen(path.c_str(), "wb");
  if (!probe) throw Error(ErrorKind::kIo, "cannot write " + path + ": " + std::strerror(errno));
  std::fclose(probe);
  if (format_ == Format::Png) {
    surface_ = cairo_api().image_surface_create(CAIRO_FORMAT_RGB24, width, height);
  } else {
    surface_ = cairo_api().svg_surface_create(path.c_str(), width, height);
    cairo_api().svg_surface_set_document_unit(surface_, CAIRO_SVG_UNIT_PX);
  }
  if (cairo_api().surface_status(surface_) != CAIRO_STATUS_SUCCESS) {
    std::string why = cairo_api().status_to_string(cairo_api().surface_status(surface_));
    cairo_api().surface_destroy(surface_);
    throw Error(ErrorKind::kIo, "cannot create image " + path + ": " + why);
  }
  cr_ = cairo_api().create(surface_);
  set_color(1, 1, 1);
  cairo_api().paint(cr_);
}

Canvas::~Canvas() {
  if (cr_) cairo_api().destroy(cr_);
  if (surface_) cairo_api().surface_destroy(surface_);
}

namespace {
void select_ui_font(cairo_t* cr, double size, bool bold) {
  cairo_api().select_font_face(cr, "DejaVu Sans", CAIRO_FONT_SLANT_NORMAL,
                               bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL);
  cairo_api().set_font_size(cr, size);
}
}  // namespace

double measure_text(const std::string& s, double size, bool bold) {
  // One small image context for the process's measurements (the command line is one thread).
  static cairo_t* const cr = cairo_api().create(cairo_api().image_surface_create(CAIRO_FORMAT_RGB24, 1, 1));
  select_ui_font(cr, size, bold);
  cairo_text_extents_t e;
  cairo_api().text_extents(cr, s.c_str(), &e);
  return e.x_advance;
}

double Canvas::text_width(const std::string& s, double size, bool bold) const { return measure_text(s, size, bold); }

void Canvas::select_font(double size, bool bold) const { select_ui_font(cr_, size, bold); }

std::string Canvas::fit_text(const std::string& s, double size, double max_width, bool bold, Cut cut) const {
  if (text_width(s, size, bold) <= max_width) return s;
  // Code point boundaries, so a cut never splits a UTF-8 sequence.
  std::vector<size_t> starts;
  for (size_t i = 0; i < s.size(); i++)
    if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80) starts.push_back(i);
  starts.push_back(s.size());
  const size_t points = starts.size() - 1;
  const std::string ellipsis = "\xE2\x80\xA6";  // U+2026
  for (size_t cut_points = 1; cut_points <= points; cut_points++) {
    const size_t kept = points - cut_points;
    const size_t head = cut == Cut::Middle ? (kept + 1) / 2 : 0;
    const std::string candidate = s.substr(0, starts[head]) + ellipsis + s.substr(starts[head + cut_points]);
    if (text_width(candidate, size, bold) <= max_width) return candidate;
  }
  return ellipsis;
}

void Canvas::text(double x, double y, const std::string& s, double size, HAlign h, VAlign v, bool bold, double angle) {
  select_font(size, bold);
  cairo_text_extents_t te;
  cairo_api().text_extents(cr_, s.c_str(), &te);
  cairo_font_extents_t fe;
  cairo_api().font_extents(cr_, &fe);
  double dx = h == HAlign::Left ? 0 : h == HAlign::Center ? -te.x_advance / 2 : -te.x_advance;
  // Vertical placement from the font's ascent/descent, so labels in a row share a baseline.
  double dy = v == VAlign::Baseline ? 0
              : v == VAlign::Top    ? fe.ascent
              : v == VAlign::Middle ? (fe.ascent - fe.descent) / 2
                                    : -fe.descent;
  if (format_ == Format::Svg) {
    add_svg_text(x, y, dx, dy, s, size, h, bold, angle);
    return;
  }
  cairo_api().save(cr_);
  cairo_api().translate(cr_, x, y);
  cairo_api().rotate(cr_, -angle * M_PI / 180.0);
  cairo_api().move_to(cr_, dx, dy);
  cairo_api().show_text(cr_, s.c_str());
  cairo_api().restore(cr_);
}

namespace {

// Text as XML character data: markup characters as entities, and what XML 1.0 has no character
// for (C0 controls but tab, newline and return; bytes that are not UTF-8) as U+FFFD, so any name
// makes a well-formed SVG.
std::string xml_escaped(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size();) {
    const unsigned char ch = static_cast<unsigned char>(s[i]);
    const size_t n = utf8_sequence_length(s, i);
    if (n == 0) {
      out += kUtf8Replacement;
      ++i;
      continue;
    }
    if (ch < 0x20 && ch != '\t' && ch != '\n' && ch != '\r') out += kUtf8Replacement;
    else if (ch == '&') out += "&amp;";
    else if (ch == '<') out += "&lt;";
    else if (ch == '>') out += "&gt;";
    else if (ch == '"') out += "&quot;";
    else out.append(s, i, n);
    i += n;
  }
  return out;
}

std::string svg_number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}

}  // namespace

void Canvas::add_svg_text(double x, double y, double dx, double dy, const std::string& s, double size, HAlign h,
                          bool bold, double angle) {
  double r = 0, g = 0, b = 0, a = 1;
  cairo_api().pattern_get_rgba(cairo_api().get_source(cr_), &r, &g, &b, &a);
  // The anchor rather than the measured offset places the text, so a viewer that substitutes
  // another font keeps centred and right-aligned labels where they belong.
  const char* anchor = h == HAlign::Left ? "start" : h == HAlign::Center ? "middle" : "end";
  const double anchor_x = h == HAlign::Left ? dx : 0;
  std::string e = "<text";
  if (angle == 0) {
    e += " x=\"" + svg_number(x + anchor_x) + "\" y=\"" + svg_number(y + dy) + "\"";
  } else {
    e += " transform=\"translate(" + svg_number(x) + " " + svg_number(y) + ") rotate(" + svg_number(-angle) +
         ")\" x=\"" + svg_number(anchor_x) + "\" y=\"" + svg_number(dy) + "\"";
  }
  e += " font-size=\"" + svg_number(size) + "\"";
  if (h != HAlign::Left) e += std::string(" text-anchor=\"") + anchor + "\"";
  if (bold) e += " font-weight=\"bold\"";
  auto channel = [](double c) { return std::to_string(static_cast<int>(std::lround(std::clamp(c, 0.0, 1.0) * 255))); };
  e += " fill=\"rgb(" + channel(r) + "," + channel(g) + "," + channel(b) + ")\"";
  if (a < 1) e += " fill-opacity=\"" + svg_number(a) + "\"";
  svg_text_ += e + ">" + xml_escaped(s) + "</text>\n";
}

// Adds the text elements before the end of the SVG cairo wrote, so they lie over the drawing.
void Canvas::write_svg_text() const {
  std::string svg;
  {
    std::ifstream in(path_, std::ios::binary);
    svg.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    if (!in.good() && !in.eof()) throw Error(ErrorKind::kIo, "cannot read back " + path_);
  }
  const size_t end = svg.rfind("</svg>");
  if (end == std::string::npos) throw Error(ErrorKind::kIo, "cairo wrote no SVG end tag into " + path_);
  svg.insert(end,
             "<g font-family=\"DejaVu Sans, Verdana, sans-serif\" xml:space=\"preserve\">\n" + svg_text_ + "</g>\n");
  std::ofstream out(path_, std::ios::binary | std::ios::trunc);
  out << svg;
  out.flush();
  if (!out) throw Error(ErrorKind::kIo, "cannot write " + path_ + ": " + std::strerror(errno));
}

void Canvas::set_color(double r, double g, double b, double a) { cairo_api().set_source_rgba(cr_, r, g, b, a); }

void Canvas::finish() {
  if (finished_) return;
  finished_ = true;
  cairo_status_t st = cairo_api().status(cr_);
  if (st != CAIRO_STATUS_SUCCESS)
    throw Error(ErrorKind::kIo, "drawing " + path_ + " failed: " + cairo_api().status_to_string(st));
  if (format_ == Format::Png) {
    st = cairo_api().surface_write_to_png(surface_, path_.c_str());
  } else {
    cairo_api().surface_finish(surface_);
    st = cairo_api().surface_status(surface_);
  }
  if (st != CAIRO_STATUS_SUCCESS)
    throw Error(ErrorKind::kIo, "cannot write " + path_ + ": " + cairo_api().status_to_string(st));
  if (format_ == Format::Svg) write_svg_text();
}

}  // namespace trialdb::plot
