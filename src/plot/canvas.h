// A drawing surface that ends up as a PNG or an SVG file, chosen by the output file's extension.
//
// Everything is drawn with cairo (Debian's libcairo2): one drawing code path gives both a raster
// PNG (image surface + cairo_surface_write_to_png) and a vector SVG (cairo's SVG surface), with
// antialiased lines and real fonts, and no image encoder of our own to get wrong.
//
// Text in an SVG stays text: cairo's SVG surface writes every glyph as a path (a chart's labels
// could be neither selected, searched nor read by a screen reader), so in SVG the canvas leaves
// text out of cairo's drawing and adds it as <text> elements, over the drawing, when it writes
// the file. Text is measured with the same font either way, so the layout is the same.
#pragma once
#include <cairo.h>

#include <string>

#include "schema/status.h"

namespace trialdb::plot {

// Failures throw trialdb::Error (schema/status.h): kInvalidInput for an output name or image
// size that cannot be drawn, kIo when the file cannot be created or written.

enum class Format { Png, Svg };

// The format a file name asks for; throws Error (kInvalidInput) naming the file when it is neither.
Format format_for_path(const std::string& path);

// The advance width of s in the UI sans font at this size, measured without an image (for
// layouts that decide the image's size).
double measure_text(const std::string& s, double size, bool bold = false);

enum class HAlign { Left, Center, Right };
enum class VAlign { Top, Middle, Bottom, Baseline };

class Canvas {
 public:
  // Opens the output (checking it is writable now, so a bad path fails before any work).
  Canvas(const std::string& path, int width, int height);
  ~Canvas();
  Canvas(const Canvas&) = delete;
  Canvas& operator=(const Canvas&) = delete;

  cairo_t* cr() const { return cr_; }
  int width() const { return width_; }
  int height() const { return height_; }

  // Text in the UI sans font (DejaVu Sans on Debian). angle in degrees, counter-clockwise.
  double text_width(const std::string& s, double size, bool bold = false) const;
  void text(double x, double y, const std::string& s, double size, HAlign h, VAlign v, bool bold = false,
            double angle = 0);
  // s shortened with an ellipsis so that it fits in max_width: the front is cut (tensor names
  // differ at their ends), or with Cut::Middle its middle (both ends are kept).
  enum class Cut { Front, Middle };
  std::string fit_text(const std::string& s, double size, double max_width, bool bold = false,
                       Cut cut = Cut::Front) const;

  void set_color(double r, double g, double b, double a = 1.0);

  // Writes the file; throws Error (kIo) naming the file on failure.
  void finish();

 private:
  void select_font(double size, bool bold) const;
  // The <text> element of a string drawn at (x, y) (its baseline start after rotation).
  void add_svg_text(double x, double y, double dx, double dy, const std::string& s, double size, HAlign h, bool bold,
                    double angle);
  void write_svg_text() const;

  std::string path_;
  Format format_;
  int width_, height_;
  cairo_surface_t* surface_ = nullptr;
  cairo_t* cr_ = nullptr;
  bool finished_ = false;
  std::string svg_text_;  // SVG: the <text> elements, added to the file by finish()
};

}  // namespace trialdb::plot
