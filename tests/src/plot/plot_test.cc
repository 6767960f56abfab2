// The chart library: tick placement and labels, and that each chart writes a valid image of the
// size asked for (PNG header, SVG root element), also for empty and degenerate data.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <string>

#include "src/plot/chart.h"

namespace trialdb::plot {
namespace {

std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

// Width and height from a PNG's IHDR chunk, or (0, 0) when the file is not a PNG.
std::pair<uint32_t, uint32_t> png_size(const std::string& path) {
  std::string b = slurp(path);
  if (b.size() < 24 || b.compare(0, 8, "\x89PNG\r\n\x1a\n", 8) != 0 || b.compare(12, 4, "IHDR") != 0) return {0, 0};
  auto be32 = [&](size_t o) {
    return uint32_t(uint8_t(b[o])) << 24 | uint32_t(uint8_t(b[o + 1])) << 16 | uint32_t(uint8_t(b[o + 2])) << 8 |
           uint32_t(uint8_t(b[o + 3]));
  };
  return {be32(16), be32(20)};
}

TEST(Ticks, FormatNumberIsShort) {
  EXPECT_EQ(format_number(0), "0");
  EXPECT_EQ(format_number(2e-5), "2e-5");
  EXPECT_EQ(format_number(1500), "1500");
  EXPECT_EQ(format_number(0.25), "0.25");
  EXPECT_EQ(format_number(NAN), "nan");
}

TEST(Ticks, LinearTicksAreNiceAndInside) {
  auto t = linear_ticks(-0.3, 2.7, 6);
  ASSERT_GE(t.size(), 3u);
  for (const Tick& k : t) {
    EXPECT_GE(k.value, -0.3);
    EXPECT_LE(k.value, 2.7);
  }
  EXPECT_EQ(t[1].value - t[0].value, 0.5);
  EXPECT_EQ(t[0].label, "0");  // -0 and rounding noise snap to 0
}

TEST(Ticks, LabelsOfLargeStepsHaveNoExponent) {
  auto t = linear_ticks(-21, 19, 4);
  ASSERT_FALSE(t.empty());
  EXPECT_EQ(t.front().label, "-20");
}

TEST(Ticks, IntegerAxisNeverHasFractionalSteps) {
  auto t = linear_ticks(0, 3, 12, true);
  ASSERT_EQ(t.size(), 4u);
  EXPECT_EQ(t[1].label, "1");
}

TEST(Ticks, LogTicksAreDecades) {
  auto t = log_ticks(1e-6, 1e2, 5);
  ASSERT_GE(t.size(), 3u);
  for (const Tick& k : t) {
    double e = std::log10(k.value);
    EXPECT_NEAR(e, std::round(e), 1e-9);
  }
  auto short_range = log_ticks(0.15, 0.9, 5);  // inside one decade: 1-2-5 ticks
  ASSERT_EQ(short_range.size(), 2u);
  EXPECT_EQ(short_range[0].label, "0.2");
}

TEST(Render, LineChartPngHasTheRequestedSize) {
  LineChart c;
  c.title = "t";
  c.x_title = "step";
  c.y_title = "l2";
  c.series.push_back({"a", {0, 1, 2}, {1, NAN, 3}, palette(0), 0});
  c.legend.push_back({"a", palette(0)});
  render_line_chart(c, "line.png", {640, 360});
  auto [w, h] = png_size("line.png");
  EXPECT_EQ(w, 640u);
  EXPECT_EQ(h, 360u);
}

TEST(Render, EmptyAndLogChartsStillRender) {
  LineChart c;
  c.log_y = true;
  c.series.push_back({"neg", {0, 1}, {-1, 0}, palette(1), 1});  // nothing positive to show
  render_line_chart(c, "empty.svg", {300, 200});
  std::string svg = slurp("empty.svg");
  EXPECT_NE(svg.find("<svg"), std::string::npos);
  EXPECT_NE(svg.find("width=\"300"), std::string::npos);
  EXPECT_NE(svg.find("height=\"200"), std::string::npos);
}

TEST(Render, HeatMapAndTimeline) {
  HeatMap m;
  HeatPanel p;
  p.x = {0, 2, 5};
  p.y_edges = {-1, 0, 1};
  p.counts = {1, 2, 0, 5, 7, 1};
  m.panels = {p, HeatPanel{}};
  render_heatmap(m, "heat.png", {500, 400});
  EXPECT_EQ(png_size("heat.png"), std::make_pair(500u, 400u));
  Timeline t;
  t.rows = {"rule_a", "rule_b"};
  t.marks = {{0, 3, 1, palette(0)}, {1, 4, 5, palette(1)}};
  render_timeline(t, "timeline.png", {420, 300});
  EXPECT_EQ(png_size("timeline.png"), std::make_pair(420u, 300u));
}

TEST(Render, BadOutputsAreClearErrors) {
  LineChart c;
  EXPECT_THROW(render_line_chart(c, "chart.jpg", {300, 200}), Error);
  EXPECT_THROW(render_line_chart(c, "no/such/dir/chart.png", {300, 200}), Error);
  EXPECT_THROW(render_line_chart(c, "tiny.png", {10, 10}), Error);
}

}  // namespace
}  // namespace trialdb::plot
