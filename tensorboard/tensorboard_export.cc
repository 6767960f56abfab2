// TensorBoard runs from the database (tensorboard_export.h): each trial's queries stream rows in
// step order, and each row becomes an Event in the event file of its step's mode.
#include "tensorboard/tensorboard_export.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <set>

#include <nlohmann/json.hpp>

#include "ingest/format/summary_encoder.h"
#include "schema/py_regex.h"
#include "schema/status.h"
#include "schema/temp_path.h"
#include "tensorboard/event_file.h"

namespace trialdb::tensorboard {

namespace fs = std::filesystem;

namespace {

constexpr const char* kReductionNames[] = {"min", "max", "mean", "prod", "std", "variance", "sum", "l1", "l2"};
constexpr std::string_view kAbsSuffix = "_abs";
constexpr const char* kStateFile = "trialdb-tensorboard.json";
// Collections whose tensors are scalars a user watches: written under their own names.
const std::set<std::string> kScalarCollections = {"losses", "metrics", "scalars", "sm_metrics"};
// Collections every tensor is in: a tensor is grouped under another one when it has one.
const std::set<std::string> kCatchAllCollections = {"all", "default"};
constexpr const char* kNoCollection = "tensors";

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

double real_or_nan(const Statement& q, int col) {
  return q.is_null(col) ? std::numeric_limits<double>::quiet_NaN() : q.real(col);
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// What was exported before: the global steps, and per rule and step how many findings.
struct ExportState {
  std::set<int64_t> steps;
  std::map<std::string, std::map<int64_t, int64_t>> findings;

  static ExportState load(const fs::path& file) {
    ExportState s;
    std::ifstream in(file);
    if (!in) return s;
    try {
      const nlohmann::json j = nlohmann::json::parse(in);
      for (const auto& range : j.at("steps"))
        for (int64_t step = range.at(0).get<int64_t>(); step <= range.at(1).get<int64_t>(); ++step)
          s.steps.insert(step);
      for (const auto& [rule, by_step] : j.at("findings").items())
        for (const auto& [step, n] : by_step.items()) s.findings[rule][std::stoll(step)] = n.get<int64_t>();
    } catch (const std::exception& e) {
      throw Error(ErrorKind::kInvalidInput, std::string("not a trialdb TensorBoard state file: ") + e.what(),
                  file.string());
    }
    return s;
  }

  // Steps as [first, last] ranges, so a long trial's file stays small.
  void save(const fs::path& file) const {
    nlohmann::json ranges = nlohmann::json::array();
    for (int64_t step : steps) {
      if (!ranges.empty() && ranges.back()[1].get<int64_t>() == step - 1) ranges.back()[1] = step;
      else ranges.push_back({step, step});
    }
    nlohmann::json by_rule = nlohmann::json::object();
    for (const auto& [rule, by_step] : findings)
      for (const auto& [step, n] : by_step) by_rule[rule][std::to_string(step)] = n;
    const fs::path temp = temp_path_of(file);
    {
      std::ofstream out(temp, std::ios::trunc);
      out << nlohmann::json{{"steps", ranges}, {"findings", by_rule}}.dump() << "\n";
      if (!out.flush()) throw Error(ErrorKind::kIo, "cannot write", temp.string());
    }
    std::error_code ec;
    fs::rename(temp, file, ec);
    if (ec) throw Error(ErrorKind::kIo, "cannot rename into place: " + ec.message(), file.string());
  }
};

// One trial's export: its steps' modes, its tensors' groups, and an event file per mode, opened
// when the mode's first event comes.
class TrialExport {
 public:
  TrialExport(Database& db, const fs::path& folder, const std::string& trial, const TensorBoardOptions& options)
      : db_(db), folder_(folder), trial_(trial), options_(options), wall_time_(now_seconds()) {
    state_ = ExportState::load(run_root() / kStateFile);
    if (!options.tensor_regex.empty()) {
      const Status s = PyRegex::compile(options.tensor_regex, &regex_);
      if (!s.is_ok()) throw Error(ErrorKind::kUsage, "--tensors: " + s.cause());
    }
    Statement steps(db_.handle(), "SELECT step, mode FROM steps WHERE trial = ?1 AND complete");
    steps.bind(1, trial_);
    while (steps.step()) mode_of_step_[steps.int64(0)] = steps.text(1);
    load_groups();
  }

  std::vector<RunReport> run() {
    write_reductions();
    write_histograms();
    write_findings();
    std::vector<RunReport> reports;
    for (auto& [mode, file] : files_) {
      file->commit();
      reports.push_back({trial_, escape_run_name(trial_) + "/" + mode, file->path().string(),
                         static_cast<int64_t>(steps_written_[mode].size()), file->events()});
    }
    for (const auto& [step, mode] : mode_of_step_) state_.steps.insert(step);
    if (!files_.empty()) state_.save(run_root() / kStateFile);
    return reports;
  }

 private:
  fs::path run_root() const { return folder_ / escape_run_name(trial_); }
  bool new_step(int64_t step) const { return mode_of_step_.count(step) && !state_.steps.count(step); }
  bool selected(const std::string& tensor) const { return !regex_ || regex_->search(tensor); }

  // The collection a tensor's tags are grouped under: its first by name that is not a catch-all.
  void load_groups() {
    Statement q(db_.handle(),
                "SELECT tensor, collection FROM collections WHERE trial = ?1 ORDER BY tensor, collection");
    q.bind(1, trial_);
    while (q.step()) {
      const std::string tensor = q.text(0), collection = q.text(1);
      if (kScalarCollections.count(collection)) scalar_tensors_.insert(tensor);
      auto [it, inserted] = group_.emplace(tensor, collection);
      if (!inserted && kCatchAllCollections.count(it->second) && !kCatchAllCollections.count(collection))
        it->second = collection;
    }
  }

  std::string group(const std::string& tensor) const {
    const auto it = group_.find(tensor);
    return it == group_.end() ? kNoCollection : it->second;
  }

  void emit(int64_t step, const std::string& event) {
    const std::string mode = lower(mode_of_step_.at(step));
    std::unique_ptr<EventFile>& file = files_[mode];
    if (!file) file = std::make_unique<EventFile>(run_root() / mode, wall_time_);
    file->append(event);
    steps_written_[mode].insert(step);
  }

  // Scalars: the losses' and metrics' means under their own names, and the chosen reductions of
  // the selected tensors under <collection>/<tensor>/<reduction>. A NaN in any worker is NaN.
  void write_reductions() {
    std::vector<ReductionChoice> wanted = options_.reductions;
    const bool mean_wanted =
        std::any_of(wanted.begin(), wanted.end(), [](const ReductionChoice& r) { return r.name == "mean" && !r.abs; });
    if (!mean_wanted) wanted.push_back({"mean", false});  // for the losses and metrics
    Statement q(
        db_.handle(),
        "SELECT global_step, tensor, CASE WHEN count(value) = count(*) THEN avg(value) END FROM reductions "
        "WHERE trial = ?1 AND reduction = ?2 AND abs = ?3 GROUP BY global_step, tensor ORDER BY global_step, tensor");
    for (const ReductionChoice& r : wanted) {
      const bool chosen = r.name != "mean" || r.abs || mean_wanted;
      const std::string suffix = r.name + (r.abs ? std::string(kAbsSuffix) : "");
      q.bind(1, trial_).bind(2, r.name).bind(3, r.abs ? 1 : 0);
      while (q.step()) {
        const int64_t step = q.int64(0);
        if (!new_step(step)) continue;
        const std::string tensor = q.text(1);
        const float value = static_cast<float>(real_or_nan(q, 2));
        if (r.name == "mean" && !r.abs && scalar_tensors_.count(tensor))
          emit(step, encode_scalar_event(wall_time_, step, tensor, value));
        if (chosen && selected(tensor))
          emit(step, encode_scalar_event(wall_time_, step, group(tensor) + "/" + tensor + "/" + suffix, value));
      }
      q.reset();
    }
  }

  struct HistogramStats {
    double min = 0, max = 0, num = 0, sum = 0, sum_squares = 0;
  };

  // min, max and the finite count from distributions; sum and sum of squares from the reductions.
  std::map<std::pair<int64_t, std::string>, HistogramStats> histogram_stats() {
    std::map<std::pair<int64_t, std::string>, HistogramStats> stats;
    Statement d(
        db_.handle(),
        "SELECT s.step, d.tensor, min(d.p0), max(d.p100), sum(d.count - d.nan - d.pos_inf - d.neg_inf) "
        "FROM distributions d JOIN steps s ON s.trial = d.trial AND s.mode = d.mode AND s.mode_step = d.mode_step "
        "WHERE d.trial = ?1 GROUP BY s.step, d.tensor");
    d.bind(1, trial_);
    while (d.step()) {
      if (!new_step(d.int64(0)) || !selected(d.text(1))) continue;
      HistogramStats& h = stats[{d.int64(0), d.text(1)}];
      h.min = real_or_nan(d, 2);
      h.max = real_or_nan(d, 3);
      h.num = d.real(4);
    }
    Statement r(db_.handle(),
                "SELECT global_step, tensor, sum(CASE WHEN reduction = 'sum' THEN value END), "
                "sum(CASE WHEN reduction = 'l2' THEN value * value END), "
                "count(*) - count(value) FROM reductions WHERE trial = ?1 AND abs = 0 AND reduction IN ('sum', 'l2') "
                "GROUP BY global_step, tensor");
    r.bind(1, trial_);
    while (r.step()) {
      const auto it = stats.find({r.int64(0), r.text(1)});
      if (it == stats.end()) continue;
      const bool nan = r.int64(4) > 0;
      it->second.sum = nan ? std::numeric_limits<double>::quiet_NaN() : real_or_nan(r, 2);
      it->second.sum_squares = nan ? std::numeric_limits<double>::quiet_NaN() : real_or_nan(r, 3);
    }
    return stats;
  }

  // Histograms: the global-grid buckets of every numeric value, workers merged, as TensorBoard's
  // (previous limit, limit] buckets: an empty bucket ends where a gap between buckets starts.
  void write_histograms() {
    const auto stats = histogram_stats();
    Statement q(db_.handle(),
                "SELECT s.step, h.tensor, h.lo, h.hi, sum(h.count) FROM histogram_buckets h "
                "JOIN steps s ON s.trial = h.trial AND s.mode = h.mode AND s.mode_step = h.mode_step "
                "WHERE h.trial = ?1 GROUP BY s.step, h.tensor, h.lo, h.hi ORDER BY s.step, h.tensor, h.lo, h.hi");
    q.bind(1, trial_);
    SummaryHistogram h;
    int64_t step = 0;
    std::string tensor;
    auto finish = [&] {
      if (h.limits.empty()) return;
      const auto it = stats.find({step, tensor});
      if (it != stats.end()) {
        h.min = it->second.min;
        h.max = it->second.max;
        h.num = it->second.num;
        h.sum = it->second.sum;
        h.sum_squares = it->second.sum_squares;
      }
      emit(step, encode_histogram_event(wall_time_, step, group(tensor) + "/" + tensor, h));
      h = SummaryHistogram{};
    };
    while (q.step()) {
      if (!new_step(q.int64(0)) || !selected(q.text(1))) continue;
      if (q.int64(0) != step || q.text(1) != tensor) {
        finish();
        step = q.int64(0);
        tensor = q.text(1);
      }
      const double lo = q.real(2), hi = q.real(3), count = q.real(4);
      if (lo == hi) {  // the zeros: (previous limit, 0]
        if (!h.limits.empty() && h.limits.back() == hi) h.counts.back() += count;
        else h.limits.push_back(hi), h.counts.push_back(count);
        continue;
      }
      if (h.limits.empty() || lo > h.limits.back()) h.limits.push_back(lo), h.counts.push_back(0);
      h.limits.push_back(hi);
      h.counts.push_back(count);
    }
    finish();
  }

  // Findings as text at their step, one markdown list per rule and step; a step whose findings
  // grew since the last export is written again whole.
  void write_findings() {
    Statement exists(db_.handle(), "SELECT 1 FROM sqlite_schema WHERE name = 'rule_findings'");
    if (!exists.step()) return;
    Statement q(db_.handle(),
                "SELECT step, rule, tensor, worker, message FROM rule_findings WHERE trial = ?1 "
                "ORDER BY step, rule, tensor, worker");
    q.bind(1, trial_);
    int64_t step = 0, count = 0;
    std::string rule, markdown;
    auto finish = [&] {
      if (count == 0) return;
      int64_t& exported = state_.findings[rule][step];
      if (count > exported && mode_of_step_.count(step)) {
        emit(step, encode_text_event(wall_time_, step, "findings/" + rule, markdown));
        exported = count;
      }
      count = 0;
      markdown.clear();
    };
    while (q.step()) {
      if (q.int64(0) != step || q.text(1) != rule) {
        finish();
        step = q.int64(0);
        rule = q.text(1);
      }
      markdown += "- `" + q.text(2) + "` (" + q.text(3) + "): " + (q.is_null(4) ? std::string() : q.text(4)) + "\n";
      ++count;
    }
    finish();
  }

  Database& db_;
  fs::path folder_;
  std::string trial_;
  const TensorBoardOptions& options_;
  double wall_time_;
  ExportState state_;
  std::unique_ptr<PyRegex> regex_;
  std::map<int64_t, std::string> mode_of_step_;
  std::map<std::string, std::string> group_;
  std::set<std::string> scalar_tensors_;
  std::map<std::string, std::unique_ptr<EventFile>> files_;
  std::map<std::string, std::set<int64_t>> steps_written_;
};

}  // namespace

std::vector<ReductionChoice> parse_reductions(const std::string& list) {
  std::vector<ReductionChoice> out;
  size_t start = 0;
  while (start <= list.size()) {
    const size_t comma = std::min(list.find(',', start), list.size());
    std::string name = list.substr(start, comma - start);
    ReductionChoice r;
    if (name.size() > kAbsSuffix.size() &&
        name.compare(name.size() - kAbsSuffix.size(), kAbsSuffix.size(), kAbsSuffix) == 0) {
      r.abs = true;
      name.resize(name.size() - kAbsSuffix.size());
    }
    if (std::find(std::begin(kReductionNames), std::end(kReductionNames), name) == std::end(kReductionNames))
      throw Error(ErrorKind::kUsage, "'" + list.substr(start, comma - start) +
                                         "' is not a reduction (min, max, mean, prod, std, variance, sum, l1, l2, "
                                         "each also with _abs)");
    r.name = name;
    out.push_back(r);
    start = comma + 1;
  }
  return out;
}

std::string escape_run_name(const std::string& trial) {
  static const char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (size_t i = 0; i < trial.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(trial[i]);
    const bool plain = std::isalnum(c) || c == '_' || c == '-' || (c == '.' && i > 0);
    if (plain) out += static_cast<char>(c);
    else out += {'%', kHex[c >> 4], kHex[c & 15]};
  }
  return out;
}

std::vector<RunReport> export_tensorboard(Database& db, const std::string& folder, const TensorBoardOptions& options) {
  std::vector<RunReport> reports;
  db.exec("BEGIN");  // every trial read in one snapshot
  try {
    for (const std::string& trial : options.trials) {
      TrialExport t(db, folder, trial, options);
      for (RunReport& r : t.run()) reports.push_back(std::move(r));
    }
  } catch (...) {
    db.exec("ROLLBACK");
    throw;
  }
  db.exec("COMMIT");
  return reports;
}

}  // namespace trialdb::tensorboard
