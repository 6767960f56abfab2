// /api/distribution: a tensor's percentile bands over steps (p0..p100 from the distributions
// view) for one worker; /api/histogram: the buckets of its values at chosen steps (the
// histogram_buckets view: one global grid, edges exact), which the page spreads over its bins.
// Both from the statistics computed at ingest: no value blob is read.
#include "schema/database.h"
#include "src/output.h"
#include "src/serve/api.h"

namespace trialdb::serve {

namespace {

constexpr const char* kPercentiles[] = {"p0", "p1", "p5", "p10", "p25", "p50", "p75", "p90", "p95", "p99", "p100"};
// More steps than this in one histogram request are refused.
constexpr size_t kMaxHistogramSteps = 16;

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
  sql += ", count, nan + pos_inf + neg_inf\nFROM distributions\nWHERE trial = ?1 AND tensor = ?2 AND worker = ?3"
         " AND (?4 = '' OR mode = ?4)\nORDER BY step";
  Statement q(c.handle(), sql);
  q.bind(1, trial).bind(2, tensor).bind(3, worker).bind(4, param(p, "mode"));
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
  return {{"trial", trial}, {"tensor", tensor}, {"worker", worker}, {"workers", workers}, {"steps", steps},
          {"modes", modes}, {"percentiles", bands}, {"count", counts}, {"nonfinite", nonfinite}};
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

}  // namespace trialdb::serve
