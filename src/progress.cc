#include "src/progress.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "src/output.h"

namespace trialdb::cli {

// ---------------------------------------------------------------------------------------------
// counting what is read

std::vector<SourceFile> CountingSource::list(const std::string& prefix, const std::string& start_after, size_t limit) {
  return inner_->list(prefix, start_after, limit);
}

Status CountingSource::read(const std::string& path, std::optional<ReadBuffer>* out) {
  Status st = inner_->read(path, out);
  count(*out);
  return st;
}

Status CountingSource::read_range(const std::string& path, uint64_t offset, uint64_t length,
                                  std::optional<ReadBuffer>* out) {
  Status st = inner_->read_range(path, offset, length, out);
  count(*out);
  return st;
}

Status CountingSource::map_range(const std::string& path, uint64_t offset, uint64_t length,
                                 std::unique_ptr<MappedRange>* out) {
  Status st = inner_->map_range(path, offset, length, out);
  // A mapping is read as it is decoded; all of it is, so it counts as read now.
  if (*out) bytes_.fetch_add(length, std::memory_order_relaxed);
  return st;
}

Status CountingSource::read_ranges(const std::vector<Range>& ranges, std::vector<std::optional<ReadBuffer>>* out) {
  Status st = inner_->read_ranges(ranges, out);  // the inner source's own way (S3: concurrently)
  for (const auto& d : *out) count(d);
  return st;
}

// ---------------------------------------------------------------------------------------------
// numbers as people read them

std::string format_bytes(double bytes) {
  static const char* const kUnits[] = {"B", "kB", "MB", "GB", "TB", "PB"};
  constexpr double kStep = 1000;
  size_t unit = 0;
  while (bytes >= kStep * 0.9995 && unit + 1 < std::size(kUnits)) {
    bytes /= kStep;
    unit++;
  }
  char text[32];
  if (unit == 0) std::snprintf(text, sizeof text, "%.0f B", bytes);
  else
    std::snprintf(text, sizeof text,
                  bytes < 9.995   ? "%.2f %s"
                  : bytes < 99.95 ? "%.1f %s"
                                  : "%.0f %s",
                  bytes, kUnits[unit]);
  return text;
}

std::string format_duration(double seconds) {
  char text[32];
  if (seconds < 9.95) std::snprintf(text, sizeof text, "%.1f s", std::max(0.0, seconds));
  else if (seconds < 59.5) std::snprintf(text, sizeof text, "%.0f s", seconds);
  else if (seconds < 3600) {
    const long s = std::lround(seconds);
    std::snprintf(text, sizeof text, "%ldm%02lds", s / 60, s % 60);
  } else {
    const long m = std::lround(seconds / 60);
    std::snprintf(text, sizeof text, "%ldh%02ldm", m / 60, m % 60);
  }
  return text;
}

// ---------------------------------------------------------------------------------------------
// the progress bar

namespace {

constexpr int kMinColumns = 20;
constexpr int kMinBar = 10, kMaxBar = 40;  // characters between the brackets
constexpr double kRateAfter = 0.2;         // seconds before a rate means anything
constexpr auto kRedrawEvery = std::chrono::milliseconds(100);
constexpr const char* kEraseToEnd = "\x1b[K";

}  // namespace

std::string progress_line(const ProgressState& s, int columns) {
  columns = std::max(columns, kMinColumns) - 1;  // the last column stays empty: no wrap
  const bool timed = s.seconds >= kRateAfter;
  const std::string bytes = format_bytes(static_cast<double>(s.bytes));
  const std::string rate = timed ? format_bytes(static_cast<double>(s.bytes) / s.seconds) + "/s" : "-- B/s";
  const std::string eta =
      "ETA " + (timed && s.done > 0 && s.done <= s.total
                    ? format_duration(s.seconds * static_cast<double>(s.total - s.done) / static_cast<double>(s.done))
                    : std::string("--"));
  const std::string done = std::to_string(s.done) + "/" + std::to_string(s.total);
  const std::string percent = std::to_string(s.total ? 100 * s.done / s.total : 100) + "%";
  // From the most to the least said; the first that fits is shown.
  const std::vector<std::vector<std::string>> variants = {{done + " " + s.unit, bytes, rate, eta},
                                                          {done, bytes, rate, eta},
                                                          {percent, bytes, rate, eta},
                                                          {bytes, rate, eta},
                                                          {bytes, eta},
                                                          {bytes}};
  std::string text;
  for (const auto& parts : variants) {
    text = join(parts, "  ");
    if (static_cast<int>(text.size()) <= columns) break;
    text = join(parts, " ");
    if (static_cast<int>(text.size()) <= columns) break;
  }
  const int room = columns - static_cast<int>(text.size()) - 3;  // "[", "] "
  if (room < kMinBar) return text.substr(0, static_cast<size_t>(columns));
  const int bar = std::min(room, kMaxBar);
  const int filled = s.total ? static_cast<int>(bar * s.done / s.total) : bar;
  // Appended rather than `"[" + std::string(...)`, which GCC 12 at -O3 warns about (-Wrestrict, GCC bug 105329).
  std::string line(1, '[');
  line.append(static_cast<size_t>(filled), '#');
  line.append(static_cast<size_t>(bar - filled), ' ');
  line += "] ";
  return line + text;
}

ProgressBar::ProgressBar(const CountingSource& source)
    : source_(source), start_(std::chrono::steady_clock::now()), start_bytes_(source.bytes_read()) {}

void ProgressLine::draw(const ProgressState& s) {
  const auto now = std::chrono::steady_clock::now();
  if (now - last_draw_ < kRedrawEvery) return;
  last_draw_ = now;
  drawn_ = true;
  std::fprintf(stderr, "\r%s%s", progress_line(s, terminal_columns(STDERR_FILENO)).c_str(), kEraseToEnd);
  std::fflush(stderr);
}

void ProgressLine::erase() {
  if (!drawn_) return;
  drawn_ = false;
  last_draw_ = {};
  std::fprintf(stderr, "\r%s", kEraseToEnd);
  std::fflush(stderr);
}

void ProgressBar::operator()(size_t done, size_t total) {
  if (done >= total) {
    line_.erase();
    return;
  }
  const auto now = std::chrono::steady_clock::now();
  line_.draw({done, total, source_.bytes_read() - start_bytes_, std::chrono::duration<double>(now - start_).count()});
}

// ---------------------------------------------------------------------------------------------
// summaries

IngestSummary::IngestSummary(std::string trial, const CountingSource& source)
    : trial_(std::move(trial)), source_(source), start_(std::chrono::steady_clock::now()) {}

void IngestSummary::add(const IngestStats& pass) {
  files_ += pass.files_ingested;
  values_ += pass.values;
  values_added_ += pass.values_added;
  steps_ += pass.steps_completed;
  waiting_ = pass.files_waiting;
  errors_ += pass.errors.size();
}

namespace {

// --values all on a trial ingested with --values none: the values whose bytes it stored.
std::string bytes_added(size_t values) {
  if (values == 0) return "";
  return ", " + (values == 1 ? std::string("1 value's") : std::to_string(values) + " values'") + " bytes added";
}

std::string waiting_and_errors(size_t waiting, size_t errors) {
  return (waiting ? ", " + counted(waiting, "file") + " waiting to be complete" : "") +
         (errors ? "; " + counted(errors, "error") + " (SELECT * FROM ingest_errors)" : "");
}

}  // namespace

std::string IngestSummary::total_line() const {
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  return printable(trial_) + ": " + counted(files_, "file") + " (" +
         format_bytes(static_cast<double>(source_.bytes_read())) + " in " + format_duration(seconds) + "), " +
         counted(values_, "value") + ", " + counted(static_cast<uint64_t>(steps_), "step") + " completed" +
         bytes_added(values_added_) + waiting_and_errors(waiting_, errors_);
}

std::string IngestSummary::pass_line(const IngestStats& pass) const {
  return printable(trial_) + ": +" + counted(pass.files_ingested, "file") + ", +" + counted(pass.values, "value") +
         ", +" + counted(static_cast<uint64_t>(pass.steps_completed), "step") + " completed; so far " +
         counted(files_, "file") + " (" + format_bytes(static_cast<double>(source_.bytes_read())) + "), " +
         counted(values_, "value") + ", " + counted(static_cast<uint64_t>(steps_), "step") + " completed" +
         waiting_and_errors(waiting_, errors_);
}

std::string IngestSummary::ended_line(Database& db) const {
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  Statement q(db.handle(), R"(
    SELECT mode, count(*)
    FROM steps
    WHERE trial = ?1
    GROUP BY mode
    ORDER BY min(step))");
  q.bind(1, trial_);
  std::vector<std::string> per_mode;
  uint64_t steps = 0;
  while (q.step()) {
    per_mode.push_back(q.text(0) + " " + std::to_string(q.int64(1)));
    steps += static_cast<uint64_t>(q.int64(1));
  }
  return printable(trial_) + ": training has ended: " + counted(steps, "step") +
         (per_mode.empty() ? "" : " (" + join(per_mode, ", ") + ")") + "; this run ingested " +
         counted(files_, "file") + " (" + format_bytes(static_cast<double>(source_.bytes_read())) + "), " +
         counted(values_, "value") + " in " + format_duration(seconds) + waiting_and_errors(0, errors_);
}

}  // namespace trialdb::cli
