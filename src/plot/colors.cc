#include "src/plot/colors.h"

#include <algorithm>
#include <cmath>

namespace trialdb::plot {

Rgb palette(int i) {
  static const Rgb kTableau10[] = {{0.122, 0.467, 0.706}, {1.000, 0.498, 0.055}, {0.173, 0.627, 0.173},
                                   {0.839, 0.153, 0.157}, {0.580, 0.404, 0.741}, {0.549, 0.337, 0.294},
                                   {0.890, 0.467, 0.761}, {0.498, 0.498, 0.498}, {0.737, 0.741, 0.133},
                                   {0.090, 0.745, 0.812}};
  static_assert(sizeof kTableau10 / sizeof kTableau10[0] == kPaletteColors);
  return kTableau10[((i % kPaletteColors) + kPaletteColors) % kPaletteColors];
}

Dash dash_kind(int i) { return static_cast<Dash>(((i % kStyleVariants) + kStyleVariants) % kStyleVariants); }
Marker marker_kind(int i) { return static_cast<Marker>(((i % kStyleVariants) + kStyleVariants) % kStyleVariants); }

SeriesStyle series_style(int i) {
  const int round = i / kPaletteColors;
  return {palette(i), dash_kind(round), marker_kind(round)};
}

Rgb viridis(double t) {
  // viridis sampled at 9 evenly spaced points; linear interpolation between them is within a
  // few percent of the full 256-entry table.
  static const Rgb kStops[] = {{0.267, 0.005, 0.329}, {0.278, 0.175, 0.483}, {0.230, 0.322, 0.546},
                               {0.173, 0.449, 0.558}, {0.128, 0.567, 0.551}, {0.154, 0.681, 0.504},
                               {0.360, 0.785, 0.388}, {0.668, 0.862, 0.196}, {0.993, 0.906, 0.144}};
  constexpr int kLast = 8;
  if (!(t > 0)) t = 0;
  if (t > 1) t = 1;
  double x = t * kLast;
  int i = std::min(static_cast<int>(x), kLast - 1);
  double f = x - i;
  const Rgb& a = kStops[i];
  const Rgb& b = kStops[i + 1];
  return {a.r + (b.r - a.r) * f, a.g + (b.g - a.g) * f, a.b + (b.b - a.b) * f};
}

}  // namespace trialdb::plot
