// cairo opened by the first chart (see cairo_api.h).
#include "src/plot/cairo_api.h"

#include "schema/lazy_library.h"

namespace trialdb::plot {

namespace {

constexpr const char* kLibcairoSoname = "libcairo.so.2";

CairoApi resolve() {
  static LazyLibrary libcairo(kLibcairoSoname, "charts (plot)");
  CairoApi api{};
#define TRIALDB_CAIRO_RESOLVE(name) api.name = libcairo.function<decltype(::cairo_##name)>("cairo_" #name);
  TRIALDB_CAIRO_FUNCTIONS(TRIALDB_CAIRO_RESOLVE)
#undef TRIALDB_CAIRO_RESOLVE
  return api;
}

}  // namespace

const CairoApi& cairo_api() {
  // A function-local static: resolved once, thread-safe, and tried again by the next call if it threw.
  static const CairoApi api = resolve();
  return api;
}

}  // namespace trialdb::plot
