// cairo opened by the first chart (see cairo_api.h).
#include "src/plot/cairo_api.h"

#include "schema/lazy_library.h"

namespace trialdb::plot {

namespace {

constexpr const char* kLibcairoSoname = "libcairo.so.2";

CairoApi resolve() {
  static LazyLibrary libcairo(kLibcairoSoname, "charts (plot)");
  CairoApi api{};
#define TRIALDB_CAIRO_FUNCTION(name) api.name = libcairo.function<decltype(::cairo_##name)>("cairo_" #name)
  TRIALDB_CAIRO_FUNCTION(arc);
  TRIALDB_CAIRO_FUNCTION(clip);
  TRIALDB_CAIRO_FUNCTION(close_path);
  TRIALDB_CAIRO_FUNCTION(create);
  TRIALDB_CAIRO_FUNCTION(destroy);
  TRIALDB_CAIRO_FUNCTION(fill);
  TRIALDB_CAIRO_FUNCTION(fill_preserve);
  TRIALDB_CAIRO_FUNCTION(font_extents);
  TRIALDB_CAIRO_FUNCTION(get_source);
  TRIALDB_CAIRO_FUNCTION(image_surface_create);
  TRIALDB_CAIRO_FUNCTION(line_to);
  TRIALDB_CAIRO_FUNCTION(move_to);
  TRIALDB_CAIRO_FUNCTION(paint);
  TRIALDB_CAIRO_FUNCTION(pattern_get_rgba);
  TRIALDB_CAIRO_FUNCTION(rectangle);
  TRIALDB_CAIRO_FUNCTION(restore);
  TRIALDB_CAIRO_FUNCTION(rotate);
  TRIALDB_CAIRO_FUNCTION(save);
  TRIALDB_CAIRO_FUNCTION(select_font_face);
  TRIALDB_CAIRO_FUNCTION(set_dash);
  TRIALDB_CAIRO_FUNCTION(set_font_size);
  TRIALDB_CAIRO_FUNCTION(set_line_join);
  TRIALDB_CAIRO_FUNCTION(set_line_width);
  TRIALDB_CAIRO_FUNCTION(set_source_rgba);
  TRIALDB_CAIRO_FUNCTION(show_text);
  TRIALDB_CAIRO_FUNCTION(status);
  TRIALDB_CAIRO_FUNCTION(status_to_string);
  TRIALDB_CAIRO_FUNCTION(stroke);
  TRIALDB_CAIRO_FUNCTION(surface_destroy);
  TRIALDB_CAIRO_FUNCTION(surface_finish);
  TRIALDB_CAIRO_FUNCTION(surface_status);
  TRIALDB_CAIRO_FUNCTION(surface_write_to_png);
  TRIALDB_CAIRO_FUNCTION(svg_surface_create);
  TRIALDB_CAIRO_FUNCTION(svg_surface_set_document_unit);
  TRIALDB_CAIRO_FUNCTION(text_extents);
  TRIALDB_CAIRO_FUNCTION(translate);
#undef TRIALDB_CAIRO_FUNCTION
  return api;
}

}  // namespace

const CairoApi& cairo_api() {
  // A function-local static: resolved once, thread-safe, and tried again by the next call if it threw.
  static const CairoApi api = resolve();
  return api;
}

}  // namespace trialdb::plot
