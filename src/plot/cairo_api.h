// cairo as a table of the functions the charts call, the library opened and every function
// resolved on the first chart (schema/lazy_library.h says why): trialdb does not link cairo, so
// the commands that draw nothing do not load it and its ~15 dependencies (pixman, fontconfig,
// freetype, X11 ...). Types and constants still come from <cairo.h>; only the calls go through
// the table: cairo_api().move_to(cr, x, y) for cairo_move_to(cr, x, y).
#pragma once
#include <cairo-svg.h>
#include <cairo.h>

namespace trialdb::plot {

// Every cairo function the table holds, listed once, X(name) for cairo_name: the members below and
// their resolution (cairo_api.cc) both come from this list, so none is declared and left null.
#define TRIALDB_CAIRO_FUNCTIONS(X) \
  X(arc)                           \
  X(clip)                          \
  X(close_path)                    \
  X(create)                        \
  X(destroy)                       \
  X(fill)                          \
  X(fill_preserve)                 \
  X(font_extents)                  \
  X(get_source)                    \
  X(image_surface_create)          \
  X(line_to)                       \
  X(move_to)                       \
  X(paint)                         \
  X(pattern_get_rgba)              \
  X(rectangle)                     \
  X(restore)                       \
  X(rotate)                        \
  X(save)                          \
  X(select_font_face)              \
  X(set_dash)                      \
  X(set_font_size)                 \
  X(set_line_join)                 \
  X(set_line_width)                \
  X(set_source_rgba)               \
  X(show_text)                     \
  X(status)                        \
  X(status_to_string)              \
  X(stroke)                        \
  X(surface_destroy)               \
  X(surface_finish)                \
  X(surface_status)                \
  X(surface_write_to_png)          \
  X(svg_surface_create)            \
  X(svg_surface_set_document_unit) \
  X(text_extents)                  \
  X(translate)

struct CairoApi {
#define TRIALDB_CAIRO_FIELD(name) decltype(&::cairo_##name) name;
  TRIALDB_CAIRO_FUNCTIONS(TRIALDB_CAIRO_FIELD)
#undef TRIALDB_CAIRO_FIELD
};

// The table, with cairo loaded and every function resolved, on the first call. Throws Error (kIo)
// naming libcairo and what is missing when it cannot be loaded.
const CairoApi& cairo_api();

}  // namespace trialdb::plot
