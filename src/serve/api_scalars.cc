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
#include <charconv>
#include <cmath>
#include <limits>
#include <memory>
#include <optional>
#include <set>
#include <thread>

#include "schema/database.h"
#include "schema/py_regex.h"
#include "schema/reduction_lines.h"
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
  std::vector<LineKey> lines;  // trial x tensor, each drawn per mode
  std::string reduction;
  int abs = 0;
  std::set<std::string> modes;
  StepRange range;
  bool cut = false;  // more than kMaxLines matched
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
  Statement names(c.handle(),
                  collection.empty()
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

// Builds each line's series by mode from the rows read_reduction_lines gives (a step's workers
// one after another, averaged as SQL's avg() does: their sum over their count).
class LineBuilder {
 public:
  LineBuilder(size_t lines, const std::vector<std::string>* modes) : lines_(lines), modes_(modes) {}
  void add(const ReductionRow& r) {
    if (std::isnan(r.value)) return;  // the view's NULL: no point, as the chart has always drawn it
    std::vector<Slot>& slots = lines_[r.tensor];
    if (slots.size() <= r.mode) slots.resize(r.mode + 1);
    Slot& slot = slots[r.mode];
    Series& series = slot.series;
    if (!series.steps.empty() && series.steps.back() == r.step) {
      slot.sum += r.value;
      series.values.back() = slot.sum / ++slot.workers;
      return;
    }
    series.steps.push_back(r.step);
    series.values.push_back(r.value);
    slot.sum = r.value;
    slot.workers = 1;
  }
  SeriesByMode take(size_t line) {
    SeriesByMode out;
    for (size_t m = 0; m < lines_[line].size(); ++m)
      if (!lines_[line][m].series.steps.empty()) out[(*modes_)[m]] = std::move(lines_[line][m].series);
    return out;
  }

 private:
  struct Slot {
    Series series;
    double sum = 0, workers = 0;  // of the last step's workers
  };
  std::vector<std::vector<Slot>> lines_;  // [line][mode]
  const std::vector<std::string>* modes_;
};

// Some of a trial's tensors between two steps, by mode, workers averaged: read in one pass by
// the schema layer from the database that holds the trial.
std::vector<SeriesByMode> read_lines(ReadConnection& c, const std::string& trial,
                                     const std::vector<std::string>& tensors, const Selection& s, int64_t from,
                                     int64_t to) {
  std::vector<std::string> modes;
  LineBuilder builder(tensors.size(), &modes);
  for (const std::string& schema : c.schemas())
    if (read_reduction_lines(c.handle(), schema, trial, tensors, s.reduction, s.abs != 0, from, to, &modes,
                             [&](const ReductionRow& r) { builder.add(r); }))
      break;
  std::vector<SeriesByMode> out;
  for (size_t i = 0; i < tensors.size(); ++i) out.push_back(builder.take(i));
  return out;
}

// read_lines on two threads: the second half of the tensors on a connection borrowed from
// `pool`, when one is free (each connection reads in its own read transaction: a commit between
// their starts can give the halves different last steps, each line whole; the line cache's
// version check then reads them again). Reading the value rows is most of a first chart's cost
// (bench/README.md, "trialdb serve").
std::vector<SeriesByMode> read_lines_together(ReadConnection& c, ConnectionPool* pool, const std::string& trial,
                                              const std::vector<std::string>& tensors, const Selection& s, int64_t from,
                                              int64_t to) {
  std::optional<ConnectionPool::Lease> helper = pool && tensors.size() >= 2 ? pool->try_borrow() : std::nullopt;
  if (!helper) return read_lines(c, trial, tensors, s, from, to);
  (*helper)->share_deadline(c);
  const auto middle = tensors.begin() + static_cast<std::ptrdiff_t>(tensors.size() / 2);
  const std::vector<std::string> first(tensors.begin(), middle), second(middle, tensors.end());
  std::vector<SeriesByMode> second_lines;
  std::exception_ptr failed;
  std::thread other([&] {
    try {
      second_lines = read_lines(**helper, trial, second, s, from, to);
    } catch (...) {
      failed = std::current_exception();
    }
  });
  std::vector<SeriesByMode> out;
  try {
    out = read_lines(c, trial, first, s, from, to);
  } catch (...) {
    other.join();
    throw;
  }
  other.join();
  if (failed) std::rethrow_exception(failed);
  for (SeriesByMode& line : second_lines) out.push_back(std::move(line));
  return out;
}

// Appends `"steps":[...],"values":[...]` to out: numbers as std::to_chars writes them (the
// shortest text that reads back as the same double), the ones JSON cannot write as json_number's
// strings.
void append_series(std::string* out, const Series& s) {
  char buffer[32];
  const auto append = [&](auto v) {
    const auto end = std::to_chars(buffer, buffer + sizeof buffer, v).ptr;
    out->append(buffer, end);
  };
  *out += "\"steps\":[";
  for (size_t i = 0; i < s.steps.size(); ++i) {
    if (i) *out += ',';
    append(s.steps[i]);
  }
  *out += "],\"values\":[";
  for (size_t i = 0; i < s.values.size(); ++i) {
    if (i) *out += ',';
    if (std::isfinite(s.values[i])) append(s.values[i]);
    else *out += json_text(cli::json_number(s.values[i]));
  }
  *out += ']';
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

int64_t last_step(const SeriesByMode& line) {
  int64_t last = kFirstStep;
  for (const auto& [mode, series] : line)
    if (!series.steps.empty()) last = std::max(last, series.steps.back());
  return last;
}

// Whether the stored values at the cached line's last step are still the cached ones; `now`:
// what is stored at that step.
bool still_stored(const SeriesByMode& cached, const SeriesByMode& now) {
  const int64_t last = last_step(cached);
  for (const auto& [mode, series] : cached) {
    if (series.steps.empty() || series.steps.back() != last) continue;
    auto it = now.find(mode);
    if (it == now.end()) return false;
    const auto at = std::lower_bound(it->second.steps.begin(), it->second.steps.end(), last);
    if (at == it->second.steps.end() || *at != last) return false;
    const double a = it->second.values[static_cast<size_t>(at - it->second.steps.begin())], b = series.values.back();
    if (!(a == b || (std::isnan(a) && std::isnan(b)))) return false;
  }
  return true;
}

// The selection's whole lines, every mode at full resolution: from the cache while they are what
// is stored, the others read together, a trial at a time.
std::vector<std::shared_ptr<const SeriesByMode>> whole_lines(ReadConnection& c, ConnectionPool* pool,
                                                             const Selection& s) {
  static LineCache cache;
  std::vector<std::shared_ptr<const SeriesByMode>> out(s.lines.size());
  for (size_t first = 0; first < s.lines.size();) {
    const std::string& trial = s.lines[first].trial;
    size_t end = first;
    while (end < s.lines.size() && s.lines[end].trial == trial) ++end;
    const std::string version = trial_version(c, trial);
    const auto key = [&](size_t i) { return Json::array({trial, s.lines[i].tensor, s.reduction, s.abs}).dump(); };
    // Cached lines, checked against what is stored at their last steps (one read for all).
    std::vector<size_t> cached;
    std::vector<std::string> cached_tensors;
    int64_t lo = kLastStep, hi = kFirstStep;
    for (size_t i = first; i < end; ++i) {
      if (!(out[i] = cache.find(key(i), version))) continue;
      cached.push_back(i);
      cached_tensors.push_back(s.lines[i].tensor);
      if (const int64_t last = last_step(*out[i]); last != kFirstStep) lo = std::min(lo, last), hi = std::max(hi, last);
    }
    if (!cached.empty() && lo <= hi) {
      const std::vector<SeriesByMode> now = read_lines(c, trial, cached_tensors, s, lo, hi);
      for (size_t k = 0; k < cached.size(); ++k)
        if (!still_stored(*out[cached[k]], now[k])) out[cached[k]] = nullptr;
    }
    std::vector<size_t> missing;
    std::vector<std::string> missing_tensors;
    for (size_t i = first; i < end; ++i)
      if (!out[i]) missing.push_back(i), missing_tensors.push_back(s.lines[i].tensor);
    std::vector<SeriesByMode> read = read_lines_together(c, pool, trial, missing_tensors, s, kFirstStep, kLastStep);
    for (size_t k = 0; k < missing.size(); ++k) {
      out[missing[k]] = std::make_shared<const SeriesByMode>(std::move(read[k]));
      cache.put(key(missing[k]), version, out[missing[k]]);
    }
    first = end;
  }
  return out;
}

// The part of a series from step `from` to step `to`.
Series slice(const Series& s, int64_t from, int64_t to) {
  const auto lo = std::lower_bound(s.steps.begin(), s.steps.end(), from) - s.steps.begin();
  const auto hi = std::upper_bound(s.steps.begin(), s.steps.end(), to) - s.steps.begin();
  return {{s.steps.begin() + lo, s.steps.begin() + hi}, {s.values.begin() + lo, s.values.begin() + hi}};
}

}  // namespace

std::string api_scalars(ReadConnection& c, const Params& p, ConnectionPool* pool) {
  const Selection s = select(c, p);
  const size_t points = static_cast<size_t>(param_number(p, "points", kDefaultPoints, 4, kMaxPoints));
  const double smoothing = param_number(p, "smoothing", 0, 0, kMaxSmoothing);
  const std::vector<std::shared_ptr<const SeriesByMode>> read = whole_lines(c, pool, s);
  std::string out = json_text({{"reduction", s.reduction}, {"abs", s.abs != 0}, {"smoothing", smoothing}});
  out.back() = ',';
  out += "\"lines\":[";
  size_t total = 0, written = 0;
  bool downsampled = false;
  for (size_t i = 0; i < s.lines.size(); ++i) {
    const LineKey& line = s.lines[i];
    for (const auto& [mode, whole] : *read[i]) {
      if (!s.modes.empty() && !s.modes.count(mode)) continue;
      Series smoothed = whole;  // smoothed from the first step, as TensorBoard does, then cut to the range
      smooth(&smoothed.values, smoothing);
      const Series range = slice(smoothed, s.range.from, s.range.to);
      if (range.steps.empty()) continue;
      total += range.steps.size();
      const Series drawn = downsample(range, points);
      downsampled = downsampled || drawn.steps.size() < range.steps.size();
      if (written++) out += ',';
      out +=
          json_text({{"trial", line.trial}, {"tensor", line.tensor}, {"mode", mode}, {"points", range.steps.size()}});
      out.back() = ',';
      append_series(&out, drawn);
      out += '}';
    }
  }
  const std::string tail = json_text({{"total_points", total}, {"downsampled", downsampled}, {"lines_cut", s.cut}});
  return out + "]," + tail.substr(1);
}

Json api_scalars_at(ReadConnection& c, const Params& p, ConnectionPool* pool) {
  const Selection s = select(c, p);
  const auto step = static_cast<int64_t>(param_number(p, "step", 0, -kStepBound, kStepBound));
  // The lines as /api/scalars reads and keeps them, at full resolution and not smoothed: per
  // mode, the point at the last step at or before the one asked for, the value the line shows
  // there (found in memory: the chart's request has usually kept the lines).
  const std::vector<std::shared_ptr<const SeriesByMode>> read = whole_lines(c, pool, s);
  Json values = Json::array();
  for (size_t i = 0; i < s.lines.size(); ++i)
    for (const auto& [mode, series] : *read[i]) {
      if (!s.modes.empty() && !s.modes.count(mode)) continue;
      const auto after = std::upper_bound(series.steps.begin(), series.steps.end(), step);
      if (after == series.steps.begin()) continue;
      const auto k = static_cast<size_t>(after - series.steps.begin()) - 1;
      values.push_back({{"trial", s.lines[i].trial},
                        {"tensor", s.lines[i].tensor},
                        {"mode", mode},
                        {"step", series.steps[k]},
                        {"value", cli::json_number(series.values[k])}});
    }
  return {{"step", step}, {"values", std::move(values)}};
}

}  // namespace trialdb::serve
