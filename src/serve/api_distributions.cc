// /api/distribution: a tensor's percentile bands over steps (p0..p100 from the distributions
// view) for one worker; /api/histogram: the buckets of its values at chosen steps (the
// histogram_buckets view: one global grid, edges exact), which the page spreads over its bins;
// /api/heatmap: the same buckets over a step range, summed into value bins x step columns.
// All from the statistics computed at ingest: no value blob is read.
#include <algorithm>
#include <cmath>
#include <limits>

#include "schema/database.h"
#include "src/output.h"
#include "src/serve/api.h"

namespace trialdb::serve {

namespace {

constexpr const char* kPercentiles[] = {"p0", "p1", "p5", "p10", "p25", "p50", "p75", "p90", "p95", "p99", "p100"};
// More steps than this in one histogram request are refused.
constexpr size_t kMaxHistogramSteps = 16;
// The heat map's grid: value bins (rows) and step columns; more steps than columns are grouped,
// consecutive steps per column, so the answer's size is bounded whatever the trial's length.
constexpr double kDefaultHeatmapBins = 64, kMaxHeatmapBins = 512;
constexpr double kDefaultHeatmapColumns = 500, kMaxHeatmapColumns = 4000;

// The worker asked for, else the tensor's first (in name order).
std::string worker_of(ReadConnection& c, const Params& p, const std::string& trial, const std::string& tensor,
                      Json* workers) {
  Statement q(c.handle(), "SELECT DISTINCT worker FROM distributions WHERE trial = ?1 AND tensor = ?2 ORDER BY worker");
  q.bind(1, trial).bind(2, tensor);
  while (q.step()) workers->push_back(q.text(0));
  const std::string asked = param(p, "worker");
  if (!asked.empty()) return asked;
  return workers->empty() ? "" : (*workers)[0].get<std::string>();
}

std::string required(const Params& p, const std::string& key) {
  const std::string v = param(p, key);
  if (v.empty()) throw Error(ErrorKind::kInvalidInput, "parameter " + key + " is required");
  return v;
}

}  // namespace

Json api_distribution(ReadConnection& c, const Params& p) {
  const std::string trial = required(p, "trial"), tensor = required(p, "tensor");
  Json workers = Json::array();
  const std::string worker = worker_of(c, p, trial, tensor, &workers);
  std::string sql = "SELECT step, mode";
  for (const char* pc : kPercentiles) sql += std::string(", ") + pc;
  sql +=
      ", count, nan + pos_inf + neg_inf\nFROM distributions\nWHERE trial = ?1 AND tensor = ?2 AND worker = ?3"
      " AND (?4 = '' OR mode = ?4) AND step BETWEEN ?5 AND ?6\nORDER BY step";
  const StepRange range = step_range(p);
  Statement q(c.handle(), sql);
  q.bind(1, trial).bind(2, tensor).bind(3, worker).bind(4, param(p, "mode")).bind(5, range.from).bind(6, range.to);
  Json steps = Json::array(), modes = Json::array(), counts = Json::array(), nonfinite = Json::array();
  Json bands = Json::object();
  for (const char* pc : kPercentiles) bands[pc] = Json::array();
  while (q.step()) {
    steps.push_back(q.int64(0));
    modes.push_back(q.text(1));
    for (int i = 0; i < static_cast<int>(std::size(kPercentiles)); ++i)
      bands[kPercentiles[i]].push_back(q.is_null(2 + i) ? Json(nullptr) : cli::json_number(q.real(2 + i)));
    counts.push_back(q.int64(2 + std::size(kPercentiles)));
    nonfinite.push_back(q.int64(3 + std::size(kPercentiles)));
  }
  return {{"trial", trial}, {"tensor", tensor},     {"worker", worker}, {"workers", workers},    {"steps", steps},
          {"modes", modes}, {"percentiles", bands}, {"count", counts},  {"nonfinite", nonfinite}};
}

Json api_histogram(ReadConnection& c, const Params& p) {
  const std::string trial = required(p, "trial"), tensor = required(p, "tensor");
  Json workers = Json::array();
  const std::string worker = worker_of(c, p, trial, tensor, &workers);
  const std::vector<std::string> steps = param_all(p, "step");
  if (steps.empty() || steps.size() > kMaxHistogramSteps)
    throw Error(ErrorKind::kInvalidInput, "give 1 to " + std::to_string(kMaxHistogramSteps) + " step parameters");
  Statement q(c.handle(),
              "SELECT lo, hi, count FROM histogram_buckets\n"
              "WHERE trial = ?1 AND tensor = ?2 AND worker = ?3 AND step = ?4\n"
              "ORDER BY lo");
  Json out = Json::array();
  for (const std::string& text : steps) {
    Params one = {{"step", text}};
    const auto step = static_cast<int64_t>(param_number(one, "step", 0, -kStepBound, kStepBound));
    q.reset();
    q.bind(1, trial).bind(2, tensor).bind(3, worker).bind(4, step);
    Json lo = Json::array(), hi = Json::array(), count = Json::array();
    while (q.step()) {
      lo.push_back(cli::json_number(q.real(0)));
      hi.push_back(cli::json_number(q.real(1)));
      count.push_back(q.int64(2));
    }
    out.push_back({{"step", step}, {"lo", lo}, {"hi", hi}, {"count", count}});
  }
  return {{"trial", trial}, {"tensor", tensor}, {"worker", worker}, {"workers", workers}, {"histograms", out}};
}

Json api_heatmap(ReadConnection& c, const Params& p) {
  const std::string trial = required(p, "trial"), tensor = required(p, "tensor");
  Json workers = Json::array();
  const std::string worker = worker_of(c, p, trial, tensor, &workers);
  const std::string mode = param(p, "mode");
  const StepRange range = step_range(p);
  const auto bins = static_cast<size_t>(param_number(p, "bins", kDefaultHeatmapBins, 1, kMaxHeatmapBins));
  const auto columns = static_cast<size_t>(param_number(p, "columns", kDefaultHeatmapColumns, 1, kMaxHeatmapColumns));

  // The steps, and the value range: the smallest p0 and largest p100 of the range's steps, unless
  // lo and hi are given.
  Statement steps_q(
      c.handle(),
      "SELECT step, p0, p100\n"
      "FROM distributions\n"
      "WHERE trial = ?1 AND tensor = ?2 AND worker = ?3 AND (?4 = '' OR mode = ?4) AND step BETWEEN ?5 AND ?6\n"
      "ORDER BY step");
  steps_q.bind(1, trial).bind(2, tensor).bind(3, worker).bind(4, mode).bind(5, range.from).bind(6, range.to);
  std::vector<int64_t> steps;
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  while (steps_q.step()) {
    steps.push_back(steps_q.int64(0));
    if (!steps_q.is_null(1)) lo = std::min(lo, steps_q.real(1));
    if (!steps_q.is_null(2)) hi = std::max(hi, steps_q.real(2));
  }
  constexpr double kLargest = std::numeric_limits<double>::max();
  lo = param_number(p, "lo", lo, -kLargest, kLargest);
  hi = param_number(p, "hi", hi, -kLargest, kLargest);
  if ((!param(p, "lo").empty() || !param(p, "hi").empty()) && !(lo < hi))
    throw Error(ErrorKind::kInvalidInput, "parameters lo and hi: give lo < hi");
  if (!(lo <= hi)) lo = hi = 0;        // no finite element in the range
  if (lo == hi) lo -= 0.5, hi += 0.5;  // one value: a bin around it
  const double width = (hi - lo) / static_cast<double>(bins);

  // Step i of n goes into column i * cols / n: consecutive steps, as evenly spread as they divide.
  const size_t cols = std::min(columns, steps.size());
  std::vector<std::vector<int64_t>> counts(cols, std::vector<int64_t>(bins, 0));
  std::vector<int64_t> totals(cols, 0);
  // A bucket counts in the bin of its middle (buckets are far narrower than bins: 128 an octave);
  // those outside [lo, hi] in the first or last bin.
  Statement buckets_q(
      c.handle(),
      "SELECT step, lo, hi, count\n"
      "FROM histogram_buckets\n"
      "WHERE trial = ?1 AND tensor = ?2 AND worker = ?3 AND (?4 = '' OR mode = ?4) AND step BETWEEN ?5 AND ?6");
  buckets_q.bind(1, trial).bind(2, tensor).bind(3, worker).bind(4, mode).bind(5, range.from).bind(6, range.to);
  while (cols > 0 && buckets_q.step()) {
    const auto at = std::lower_bound(steps.begin(), steps.end(), buckets_q.int64(0));
    if (at == steps.end() || *at != buckets_q.int64(0)) continue;  // a step committed between the two reads
    const size_t column = static_cast<size_t>(at - steps.begin()) * cols / steps.size();
    const double middle = (buckets_q.real(1) + buckets_q.real(2)) / 2;
    const double bin = std::floor((middle - lo) / width);
    const size_t row =
        !(bin >= 0) ? 0 : std::min(bins - 1, static_cast<size_t>(std::min(bin, static_cast<double>(bins))));
    counts[column][row] += buckets_q.int64(3);
    totals[column] += buckets_q.int64(3);
  }

  Json first = Json::array(), last = Json::array(), grid = Json::array();
  for (size_t k = 0; k < cols; ++k) {
    first.push_back(steps[k * steps.size() / cols]);
    last.push_back(steps[(k + 1) * steps.size() / cols - 1]);
    grid.push_back(counts[k]);
  }
  return {{"trial", trial},     {"tensor", tensor},           {"worker", worker},
          {"workers", workers}, {"lo", cli::json_number(lo)}, {"hi", cli::json_number(hi)},
          {"bins", bins},       {"steps", steps.size()},      {"first_steps", first},
          {"last_steps", last}, {"totals", totals},           {"counts", grid}};
}

}  // namespace trialdb::serve
