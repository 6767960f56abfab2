// Colours: a categorical palette for series that must be told apart, and the viridis colour map
// for heat maps (perceptually uniform and readable in grey and by colour-blind people).
#pragma once

namespace trialdb::plot {

struct Rgb {
  double r, g, b;
};

// The i-th categorical colour (Tableau 10; cycles after 10).
Rgb palette(int i);

// viridis at t in [0, 1] (clamped).
Rgb viridis(double t);

}  // namespace trialdb::plot
