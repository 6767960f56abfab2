// What `trialdb ingest` tells a person while it works: a progress bar on a terminal (files of the
// pass, bytes read, rate, time left), and the summaries after a pass, while following a job, and
// when its training has ended.
//
// Bytes are counted where they are read: a TrialSource wrapped by CountingSource counts every byte
// the ingester reads through it (index and event files, local or S3), so the bar and the summary
// report the same number without the ingester knowing about either.
#pragma once
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ingest/pipeline/ingester.h"
#include "ingest/source/source.h"
#include "schema/database.h"

namespace trialdb::cli {

// A TrialSource that passes everything through and counts the bytes read (thread-safe: files are
// read on the preparing threads).
class CountingSource : public TrialSource {
 public:
  explicit CountingSource(std::unique_ptr<TrialSource> inner) : inner_(std::move(inner)) {}
  uint64_t bytes_read() const { return bytes_.load(std::memory_order_relaxed); }

  std::string root() const override { return inner_->root(); }
  std::vector<SourceFile> list(const std::string& prefix, const std::string& start_after, size_t limit) override;
  Status read(const std::string& path, std::optional<ReadBuffer>* out) override;
  Status read_range(const std::string& path, uint64_t offset, uint64_t length, std::optional<ReadBuffer>* out) override;
  Status map_range(const std::string& path, uint64_t offset, uint64_t length,
                   std::unique_ptr<MappedRange>* out) override;
  Status read_ranges(const std::vector<Range>& ranges, std::vector<std::optional<ReadBuffer>>* out) override;
  bool exists(const std::string& path) override { return inner_->exists(path); }

 private:
  void count(const std::optional<ReadBuffer>& data) {
    if (data) bytes_.fetch_add(data->size(), std::memory_order_relaxed);
  }
  std::unique_ptr<TrialSource> inner_;
  std::atomic<uint64_t> bytes_{0};
};

// "0 B", "512 B", "1.5 kB", "12.3 MB", "1.02 GB" (powers of 1000, three significant digits).
std::string format_bytes(double bytes);
// "0.4 s", "12 s", "3m05s", "1h02m".
std::string format_duration(double seconds);

// One line of progress that fits in `columns` characters (at least 20): the bar, then units done
// (an ingest's files of the pass, an export's values), bytes (read, written), rate and time left,
// with the bar, then words, left out as the terminal narrows.
struct ProgressState {
  size_t done = 0, total = 0;  // units of the work
  uint64_t bytes = 0;
  double seconds = 0;  // since the work began
  const char* unit = "files";
};
std::string progress_line(const ProgressState& s, int columns);

// A progress line on stderr, redrawn at most every 100 ms in the terminal's width (COLUMNS if set,
// else the terminal's), erased by erase() or at its end. The caller decides whether stderr is a
// terminal and the user wants it.
class ProgressLine {
 public:
  ProgressLine() = default;
  ~ProgressLine() { erase(); }
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;
  void draw(const ProgressState& s);
  void erase();

 private:
  std::chrono::steady_clock::time_point last_draw_{};
  bool drawn_ = false;
};

// The progress bar of one ingest pass, erased when the pass is done. Time and bytes count from
// its construction, made just before the pass.
class ProgressBar {
 public:
  explicit ProgressBar(const CountingSource& source);
  void operator()(size_t done, size_t total);

 private:
  const CountingSource& source_;
  std::chrono::steady_clock::time_point start_;
  uint64_t start_bytes_ = 0;
  ProgressLine line_;
};

// The running totals of an ingest run (all its passes) and the lines that report them.
class IngestSummary {
 public:
  IngestSummary(std::string trial, const CountingSource& source);
  void add(const IngestStats& pass);

  // After a one-shot ingest: "pt_bad_init: 24 files (1.3 MB in 0.2 s), 480 values, 24 steps complete".
  std::string total_line() const;
  // After a --follow pass that ingested something: what it added, and the totals so far.
  std::string pass_line(const IngestStats& pass) const;
  // When --follow ends because training has ended: the trial's steps per mode (from the steps
  // view) and what this run ingested.
  std::string ended_line(Database& db) const;

 private:
  std::string trial_;
  const CountingSource& source_;
  std::chrono::steady_clock::time_point start_;
  size_t files_ = 0, values_ = 0, values_added_ = 0, waiting_ = 0, errors_ = 0;
  int64_t steps_ = 0;
};

}  // namespace trialdb::cli
