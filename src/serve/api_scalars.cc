// /api/scalars: reductions of the chosen tensors over steps, one line per trial, tensor and mode
// (TRAIN and EVAL apart), smoothed and downsampled for drawing (series.h); /api/scalars/at: the
// exact values of the same lines at one step, for the hover readout. Lines are read whole and
// kept (line_cache.h); a step range is cut from them, after smoothing from the first step.
//
// Parameters: trial (repeatable; default every trial), tensor (Python regex over tensor names),
// collection, reduction (default mean), abs (0/1), mode (repeatable; default every mode),
// from/to (global steps, inclusive), points (per line, for drawing), smoothing (0 <= w < 1).
// The x of a point is the views' step (smdebug's: the global step, except for GLOBAL-mode steps,
// numbered by their mode step), which is what the value table is searched by; a step's workers
// are averaged.
#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <set>

#include "schema/database.h"
#include "schema/py_regex.h"
#include "src/serve/api.h"
#include "src/output.h"
#include "src/serve/line_cache.h"
#include "src/serve/series.h"

namespace trialdb::serve {

namespace {

// More lines than this in one chart are cut (the answer says so).
constexpr size_t kMaxLines = 100;
constexpr double kDefaultPoints = 1000;
constexpr double kMaxPoints = 100000;
constexpr double kMaxSmoothing = 0.999;
constexpr int64_t kFirstStep = std::numeric_limits<int64_t>::min(), kLastStep = std::numeric_limits<int64_t>::max();

struct LineKey {
  std::string trial, tensor;
};

struct Selection {
  std::vector<LineKey> lines;   // trial x tensor, each drawn per mode
  std::string reduction;
  int abs = 0;
  std::set<std::string> modes;
  StepRange range;
  bool cut = false;   // more than kMaxLines matched
};

Selection select(ReadConnection& c, const Params& p) {
  Selection s;
  s.reduction = param(p, "reduction", "mean");
  s.abs = static_cast<int>(param_number(p, "abs", 0, 0, 1));
  for (const std::string& m : param_all(p, "mode")) s.modes.insert(m);
  s.range = step_range(p);
  std::unique_ptr<PyRegex> re;
  if (const std::string pattern = param(p, "tensor"); !pattern.empty()) {
    const Status st = PyRegex::compile(pattern, &re);
    if (!st.is_ok()) throw Error(st);
  }
  const std::string collection = param(p, "collection");
  std::vector<std::string> trials = param_all(p, "trial");
  if (trials.empty()) {
    Statement all(c.handle(), "SELECT trial FROM trials ORDER BY trial");
    while (all.step()) trials.push_back(all.text(0));
  }
  Statement names(c.handle(), collection.empty()
                                  ? "SELECT tensor FROM tensors WHERE trial = ?1 ORDER BY tensor"
                                  : "SELECT tensor FROM collections WHERE trial = ?1 AND collection = ?2 ORDER BY tensor");
  for (const std::string& trial : trials) {
    names.reset();
    names.bind(1, trial);
    if (!collection.empty()) names.bind(2, collection);
    while (names.step()) {
      const std::string tensor = names.text(0);
      if (re && !re->search(tensor)) continue;
      if (s.lines.size() == kMaxLines) {
        s.cut = true;
        break;
      }
      s.lines.push_back({trial, tensor});
    }
  }
  return s;
}

// The rows of one trial's tensor in step order, as the value table's key keeps them (no sort, no
// GROUP BY: a step's workers are consecutive and averaged as they come, which halves the cost).
constexpr const char* kLineSql =
    "SELECT mode, step, value\n"
    "FROM reductions\n"
    "WHERE trial = ?1 AND tensor = ?2 AND reduction = ?3 AND abs = ?4 AND step BETWEEN ?5 AND ?6\n"
    "ORDER BY step";


// Appends a row to its mode's series; a step's further workers go into the running average.
class LineBuilder {
 public:
  void add(const std::string& mode, int64_t step, double value) {
    Series& s = by_mode_[mode];
    if (!s.steps.empty() && s.steps.back() == step) {
      double& n = workers_[mode];
      s.values.back() += (value - s.values.back()) / ++n;
      return;
    }
    s.steps.push_back(step);
    s.values.push_back(value);
    workers_[mode] = 1;
  }
  SeriesByMode& series() { return by_mode_; }

 private:
  SeriesByMode by_mode_;
  std::map<std::string, double> workers_;
};

Json series_json(const Series& s) {
  Json steps = Json::array(), values = Json::array();
  for (size_t i = 0; i < s.steps.size(); ++i) {
    steps.push_back(s.steps[i]);
    values.push_back(cli::json_number(s.values[i]));
  }
  return {{"steps", std::move(steps)}, {"values", std::move(values)}};
}


// A trial's version for the line cache: its complete steps, its end and its tensors.
std::string trial_version(ReadConnection& c, const std::string& trial) {
  Statement q(c.handle(),
              "SELECT (SELECT count(*) || '/' || ifnull(max(step), -1) FROM steps WHERE trial = ?1 AND complete)\n"
              "       || '/' || (SELECT ended FROM trials WHERE trial = ?1)\n"
              "       || '/' || (SELECT count(*) FROM tensors WHERE trial = ?1)");
  q.bind(1, trial);
  q.step();
  return q.text(0);
}

// The rows of a line between two steps, by mode, workers averaged.
SeriesByMode read_rows(ReadConnection& c, const LineKey& line, const Selection& s, int64_t from, int64_t to) {
  Statement q(c.handle(), kLineSql);
  q.bind(1, line.trial).bind(2, line.tensor).bind(3, s.reduction).bind(4, s.abs).bind(5, from).bind(6, to);
  LineBuilder builder;
  while (q.step())
    if (!q.is_null(2)) builder.add(q.text(0), q.int64(1), q.real(2));
  return std::move(builder.series());
}

// Whether the stored values at the cached line's last step are still the cached ones.
bool still_stored(ReadConnection& c, const LineKey& line, const Selection& s, const SeriesByMode& cached) {
  int64_t last = kFirstStep;
  for (const auto& [mode, series] : cached)
    if (!series.steps.empty()) last = std::max(last, series.steps.back());
  if (last == kFirstStep) return true;
  const SeriesByMode now = read_rows(c, line, s, last, last);
  for (const auto& [mode, series] : cached) {
    if (series.steps.empty() || series.steps.back() != last) continue;
    auto it = now.find(mode);
    if (it == now.end() || it->second.values.size() != 1) return false;
    const double a = it->second.values[0], b = series.values.back();
    if (!(a == b || (std::isnan(a) && std::isnan(b)))) return false;
  }
  return true;
}

// The whole line, every mode at full resolution: from the cache while it is what is stored.
std::shared_ptr<const SeriesByMode> whole_line(ReadConnection& c, const LineKey& line, const Selection& s,
                                               const std::string& version) {
  static LineCache cache;
  const std::string key = Json::array({line.trial, line.tensor, s.reduction, s.abs}).dump();
  if (auto cached = cache.find(key, version); cached && still_stored(c, line, s, *cached)) return cached;
  auto read = std::make_shared<const SeriesByMode>(read_rows(c, line, s, kFirstStep, kLastStep));
  cache.put(key, version, read);
  return read;
}

// The part of a series from step `from` to step `to`.
Series slice(const Series& s, int64_t from, int64_t to) {
  const auto lo = std::lower_bound(s.steps.begin(), s.steps.end(), from) - s.steps.begin();
  const auto hi = std::upper_bound(s.steps.begin(), s.steps.end(), to) - s.steps.begin();
  return {{s.steps.begin() + lo, s.steps.begin() + hi}, {s.values.begin() + lo, s.values.begin() + hi}};
}

}  // namespace

Json api_scalars(ReadConnection& c, const Params& p) {
  const Selection s = select(c, p);
  const size_t points = static_cast<size_t>(param_number(p, "points", kDefaultPoints, 4, kMaxPoints));
  const double smoothing = param_number(p, "smoothing", 0, 0, kMaxSmoothing);
  std::map<std::string, std::string> versions;
  Json lines = Json::array();
  size_t total = 0;
  bool downsampled = false;
  for (const LineKey& line : s.lines) {
    auto version = versions.find(line.trial);
    if (version == versions.end()) version = versions.emplace(line.trial, trial_version(c, line.trial)).first;
    for (const auto& [mode, whole] : *whole_line(c, line, s, version->second)) {
      if (!s.modes.empty() && !s.modes.count(mode)) continue;
      Series smoothed = whole;   // smoothed from the first step, as TensorBoard does, then cut to the range
      smooth(&smoothed.values, smoothing);
      const Series range = slice(smoothed, s.range.from, s.range.to);
      if (range.steps.empty()) continue;
      total += range.steps.size();
      const Series drawn = downsample(range, points);
      downsampled = downsampled || drawn.steps.size() < range.steps.size();
      Json j = {{"trial", line.trial}, {"tensor", line.tensor}, {"mode", mode}, {"points", range.steps.size()}};
      j.update(series_json(drawn));
      lines.push_back(std::move(j));
    }
  }
  return {{"reduction", s.reduction}, {"abs", s.abs != 0}, {"smoothing", smoothing}, {"lines", std::move(lines)},
          {"total_points", total}, {"downsampled", downsampled}, {"lines_cut", s.cut}};
}

Json api_scalars_at(ReadConnection& c, const Params& p) {
  Selection s = select(c, p);
  const auto step = static_cast<int64_t>(param_number(p, "step", 0, -kStepBound, kStepBound));
  // Per mode, the last step at or before the one asked for: the value the line shows there.
  Statement q(c.handle(),
              "WITH last AS (\n"
              "  SELECT mode, max(step) AS step FROM reductions\n"
              "  WHERE trial = ?1 AND tensor = ?2 AND reduction = ?3 AND abs = ?4 AND step <= ?5\n"
              "  GROUP BY mode)\n"
              "SELECT r.mode, r.step, avg(r.value)\n"
              "FROM last JOIN reductions r ON r.step = last.step AND r.mode = last.mode\n"
              "WHERE r.trial = ?1 AND r.tensor = ?2 AND r.reduction = ?3 AND r.abs = ?4\n"
              "GROUP BY r.mode");
  Json values = Json::array();
  for (const LineKey& line : s.lines) {
    q.reset();
    q.bind(1, line.trial).bind(2, line.tensor).bind(3, s.reduction).bind(4, s.abs).bind(5, step);
    while (q.step()) {
      if (q.is_null(2) || (!s.modes.empty() && !s.modes.count(q.text(0)))) continue;
      values.push_back({{"trial", line.trial}, {"tensor", line.tensor}, {"mode", q.text(0)},
                        {"step", q.int64(1)}, {"value", cli::json_number(q.real(2))}});
    }
  }
  return {{"step", step}, {"values", std::move(values)}};
}

}  // namespace trialdb::serve
