// cairo as a table of the functions the charts call, the library opened and every function
// resolved on the first chart (schema/lazy_library.h says why): trialdb does not link cairo, so
// the commands that draw nothing do not load it and its ~15 dependencies (pixman, fontconfig,
// freetype, X11 ...). Types and constants still come from <cairo.h>; only the calls go through
// the table: cairo_api().move_to(cr, x, y) for cairo_move_to(cr, x, y).
#pragma once
#include <cairo-svg.h>
#include <cairo.h>

namespace trialdb::plot {

struct CairoApi {
  decltype(&::cairo_arc) arc;
  decltype(&::cairo_clip) clip;
  decltype(&::cairo_close_path) close_path;
  decltype(&::cairo_create) create;
  decltype(&::cairo_destroy) destroy;
  decltype(&::cairo_fill) fill;
  decltype(&::cairo_fill_preserve) fill_preserve;
  decltype(&::cairo_font_extents) font_extents;
  decltype(&::cairo_get_source) get_source;
  decltype(&::cairo_image_surface_create) image_surface_create;
  decltype(&::cairo_line_to) line_to;
  decltype(&::cairo_move_to) move_to;
  decltype(&::cairo_paint) paint;
  decltype(&::cairo_pattern_get_rgba) pattern_get_rgba;
  decltype(&::cairo_rectangle) rectangle;
  decltype(&::cairo_restore) restore;
  decltype(&::cairo_rotate) rotate;
  decltype(&::cairo_save) save;
  decltype(&::cairo_select_font_face) select_font_face;
  decltype(&::cairo_set_dash) set_dash;
  decltype(&::cairo_set_font_size) set_font_size;
  decltype(&::cairo_set_line_join) set_line_join;
  decltype(&::cairo_set_line_width) set_line_width;
  decltype(&::cairo_set_source_rgba) set_source_rgba;
  decltype(&::cairo_show_text) show_text;
  decltype(&::cairo_status) status;
  decltype(&::cairo_status_to_string) status_to_string;
  decltype(&::cairo_stroke) stroke;
  decltype(&::cairo_surface_destroy) surface_destroy;
  decltype(&::cairo_surface_finish) surface_finish;
  decltype(&::cairo_surface_status) surface_status;
  decltype(&::cairo_surface_write_to_png) surface_write_to_png;
  decltype(&::cairo_svg_surface_create) svg_surface_create;
  decltype(&::cairo_svg_surface_set_document_unit) svg_surface_set_document_unit;
  decltype(&::cairo_text_extents) text_extents;
  decltype(&::cairo_translate) translate;
};

// The table, with cairo loaded and every function resolved, on the first call. Throws Error (kIo)
// naming libcairo and what is missing when it cannot be loaded.
const CairoApi& cairo_api();

}  // namespace trialdb::plot
