// The chart library: tick placement and labels, and that each chart writes a valid image of the
// size asked for (PNG header, SVG root element), also for empty and degenerate data.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <filesystem>
#include <iterator>
#include <memory>
#include <set>
#include <tuple>
#include <string>
#include <vector>

#include "src/plot/chart.h"
#include "src/plot/series_ops.h"
#include "tests/common/temp_dir.h"

namespace trialdb::plot {
namespace {

// The charts below are written by relative name: run the tests in a fresh directory, so that
// nothing is left in the folder they were started from.
class InTempDir : public ::testing::Environment {
 public:
  void SetUp() override {
    dir_ = std::make_unique<test::TempDir>("plot_test");
    start_ = std::filesystem::current_path();
    std::filesystem::current_path(dir_->path);
  }
  void TearDown() override {
    std::filesystem::current_path(start_);
    dir_.reset();
  }

 private:
  std::unique_ptr<test::TempDir> dir_;
  std::filesystem::path start_;
};
::testing::Environment* const in_temp_dir = ::testing::AddGlobalTestEnvironment(new InTempDir);

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

TEST(SeriesOps, SmoothingIsTensorBoardsDebiasedMovingAverage) {
  // TensorBoard: last = last * w + (1 - w) * y; shown = last / (1 - w^n) over the finite points.
  const std::vector<double> y = {1, 2, NAN, 4};
  const std::vector<double> s = ema_smooth(y, 0.5);
  EXPECT_DOUBLE_EQ(s[0], 1);                    // debiased: the first point is itself
  EXPECT_DOUBLE_EQ(s[1], (0.25 + 1.0) / 0.75);  // last = 0.5 * 0.5 + 0.5 * 2
  EXPECT_TRUE(std::isnan(s[2]));                // a gap stays a gap
  EXPECT_DOUBLE_EQ(s[3], ((0.25 + 1.0) * 0.5 + 2) / 0.875);
  EXPECT_EQ(ema_smooth(y, 0)[1], 2);  // weight 0: the raw values
}

TEST(SeriesOps, DownsamplingKeepsEveryStretchsExtremes) {
  std::vector<double> x, y;
  for (int i = 0; i < 1000; ++i) {
    x.push_back(i);
    y.push_back(std::sin(i / 50.0));
  }
  y[437] = 100;  // a spike
  y[611] = -100;
  const std::vector<size_t> keep = keep_extremes(x, y, 40);
  EXPECT_LE(keep.size(), 40u);
  EXPECT_EQ(keep.front(), 0u);
  EXPECT_EQ(keep.back(), 999u);
  EXPECT_TRUE(std::is_sorted(keep.begin(), keep.end()));
  EXPECT_NE(std::find(keep.begin(), keep.end(), 437u), keep.end());
  EXPECT_NE(std::find(keep.begin(), keep.end(), 611u), keep.end());
  EXPECT_EQ(keep_extremes(x, y, 1000).size(), 1000u);  // few enough: every point
}

TEST(Ticks, SymlogTicksAreSymmetricDecadesThroughZero) {
  const std::vector<Tick> t = symlog_ticks(-0.5, 20, 1e-3, 12);
  std::set<double> values;
  for (const Tick& k : t) values.insert(k.value);
  EXPECT_TRUE(values.count(0));
  EXPECT_TRUE(values.count(-0.1) && values.count(10) && values.count(1e-3) && values.count(-1e-3));
  EXPECT_FALSE(values.count(-1));                          // outside the range
  EXPECT_LE(symlog_ticks(-1e6, 1e6, 1e-6, 6).size(), 7u);  // every few decades when they are many
  EXPECT_DOUBLE_EQ(symlog_threshold({{0, 0.003, -2, 50}}), 1e-3);
  EXPECT_DOUBLE_EQ(symlog_threshold({{1e-30, 1}}), 1e-6);  // at most 6 decades under the largest
}

TEST(Render, LineChartPngHasTheRequestedSize) {
  LineChart c;
  c.title = "t";
  c.x_title = "step";
  c.y_title = "l2";
  c.series.push_back({"a", {0, 1, 2}, {1, NAN, 3}, palette(0), Dash::Solid});
  c.legend.push_back({"a", palette(0)});
  render_line_chart(c, "line.png", {640, 360});
  auto [w, h] = png_size("line.png");
  EXPECT_EQ(w, 640u);
  EXPECT_EQ(h, 360u);
}

TEST(Render, EmptyAndLogChartsStillRender) {
  LineChart c;
  c.log_y = true;
  c.series.push_back({"neg", {0, 1}, {-1, 0}, palette(1), Dash::Dashed});  // nothing positive to show
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

TEST(Styles, FortySeriesLookDifferent) {
  std::set<std::tuple<double, double, double, Dash, Marker>> seen;
  for (int i = 0; i < kDistinctStyles; ++i) {
    const SeriesStyle s = series_style(i);
    seen.insert({s.color.r, s.color.g, s.color.b, s.dash, s.marker});
  }
  EXPECT_EQ(seen.size(), 40u);
  // Beyond the palette, dash and marker change together, so neither alone has to be told apart.
  EXPECT_NE(series_style(10).dash, series_style(0).dash);
  EXPECT_NE(series_style(10).marker, series_style(0).marker);
}

TEST(Text, FittingKeepsBothEndsWhenAskedTo) {
  Canvas c("fit.png", 200, 200);
  const std::string name = "poor_weight_initialization · gradient/Net_conv1.weight";
  const double width = measure_text(name, 12) / 2;
  const std::string middle = c.fit_text(name, 12, width, false, Canvas::Cut::Middle);
  EXPECT_LE(measure_text(middle, 12), width);
  EXPECT_EQ(middle.rfind("poor_", 0), 0u) << middle;                    // the start stays
  EXPECT_EQ(middle.substr(middle.size() - 6), "weight") << middle;      // and the end
  EXPECT_NE(middle.find("\xE2\x80\xA6"), std::string::npos) << middle;  // an ellipsis between
  const std::string front = c.fit_text(name, 12, width);
  EXPECT_EQ(front.rfind("\xE2\x80\xA6", 0), 0u) << front;
  EXPECT_EQ(c.fit_text("short", 12, 100), "short");
}

TEST(Render, SvgTextStaysText) {
  LineChart c;
  c.title = "loss <TRAIN & EVAL>";
  c.x_title = "global step";
  c.series.push_back({"a", {0, 1}, {1, 2}, palette(0), Dash::Solid});
  c.legend.push_back({"gradient/Net_fc.weight", palette(0)});
  render_line_chart(c, "text.svg", {500, 300});
  const std::string svg = slurp("text.svg");
  // The title as a text element (escaped), the legend label, the axis title; no glyph outlines.
  EXPECT_NE(svg.find(">loss &lt;TRAIN &amp; EVAL&gt;</text>"), std::string::npos);
  EXPECT_NE(svg.find(">gradient/Net_fc.weight</text>"), std::string::npos);
  EXPECT_NE(svg.find(">global step</text>"), std::string::npos);
  EXPECT_EQ(svg.find("glyph"), std::string::npos);
  EXPECT_LT(svg.find("<text"), svg.rfind("</svg>"));
}

TEST(Render, SvgOfAnyNameIsWellFormed) {
  LineChart c;
  // ESC and BEL, which XML 1.0 has no character for, become U+FFFD; DEL, which it has, stays
  // (cairo itself refuses bytes that are not UTF-8, and noncharacters).
  c.title = "t\x1b]0;x\x07 <b>&amp; \x7f end";
  c.series.push_back({"a", {0, 1}, {1, 2}, palette(0), Dash::Solid});
  render_line_chart(c, "names.svg", {500, 300});
  const std::string svg = slurp("names.svg");
  EXPECT_EQ(svg.find_first_of("\x1b\x07"), std::string::npos);
  EXPECT_NE(svg.find("t\xef\xbf\xbd]0;x\xef\xbf\xbd &lt;b&gt;&amp;amp; \x7f end</text>"), std::string::npos);
}

TEST(Render, ASpecialFileIsRefusedNotOpened) {
  // Opening a FIFO nobody reads would wait for ever.
  ASSERT_EQ(mkfifo("chart_fifo.svg", 0600), 0);
  LineChart c;
  EXPECT_THROW(render_line_chart(c, "chart_fifo.svg", {300, 200}), Error);
  unlink("chart_fifo.svg");
}

TEST(Render, LegendBelowANarrowChartGrowsTheImage) {
  LineChart c;
  for (int i = 0; i < 40; ++i) {
    const SeriesStyle st = series_style(i);
    c.series.push_back({"s", {0, 1}, {double(i), double(i + 1)}, st.color, st.dash, st.marker});
    c.legend.push_back({"gradient/a_long_layer_name_" + std::to_string(i) + ".weight", st.color, st.dash,
                        LegendEntry::Line, false, st.marker});
  }
  const LegendLayout l = layout_legend(c.legend, base_font_size(500, 400) * 0.9, 500);  // as the chart lays it out
  EXPECT_TRUE(l.below);
  EXPECT_LE(l.width, 500);
  render_line_chart(c, "narrow.png", {500, 400, true});
  auto [w, h] = png_size("narrow.png");
  EXPECT_EQ(w, 500u);
  EXPECT_GE(h, l.height + 400 * 0.45);  // every entry, and the plot keeps its share
  render_line_chart(c, "fixed.png", {500, 400, false});
  EXPECT_EQ(png_size("fixed.png"), std::make_pair(500u, 400u));
}

TEST(Render, BadOutputsAreClearErrors) {
  LineChart c;
  EXPECT_THROW(render_line_chart(c, "chart.jpg", {300, 200}), Error);
  EXPECT_THROW(render_line_chart(c, "no/such/dir/chart.png", {300, 200}), Error);
  EXPECT_THROW(render_line_chart(c, "tiny.png", {10, 10}), Error);
}

}  // namespace
}  // namespace trialdb::plot
