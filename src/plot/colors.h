// Colours and series styles: a categorical palette for series that must be told apart, styles
// that keep 40 series apart (colour, dash and marker together), and the viridis colour map for
// heat maps (perceptually uniform and readable in grey and by colour-blind people).
#pragma once

namespace trialdb::plot {

struct Rgb {
  double r, g, b;
};

// The i-th categorical colour (Tableau 10; cycles after 10).
Rgb palette(int i);
inline constexpr int kPaletteColors = 10;

// Line patterns and point markers; each has kStyleVariants kinds.
enum class Dash { Solid, Dashed, Dotted, DashDot };
enum class Marker { Circle, Square, Triangle, Diamond, None };
inline constexpr int kStyleVariants = 4;

struct SeriesStyle {
  Rgb color;
  Dash dash;
  Marker marker;
};

// The style of the i-th series: the colours first, then the colours again with the next dash
// and marker, so the first kDistinctStyles series all look different.
SeriesStyle series_style(int i);
inline constexpr int kDistinctStyles = kPaletteColors * kStyleVariants;

// The i-th dash or marker kind (cycles after kStyleVariants).
Dash dash_kind(int i);
Marker marker_kind(int i);

// viridis at t in [0, 1] (clamped).
Rgb viridis(double t);

}  // namespace trialdb::plot
