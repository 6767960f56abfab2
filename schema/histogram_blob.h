// The histogram blob: how one value's histogram is stored (value_histogram.buckets, schema.sql),
// the encoder and the decoder side by side. The histogram is the value's non-empty buckets of the
// global grid (kernels/bucket_grid.h) as runs of consecutive buckets, a run holding a 0 for each
// empty bucket inside it (kernels/bucket_runs.h decides where runs break):
//
//   blob  := u8 format (kHistogramFormatPacked) run*
//   run   := varint start | varint shape | counts
//   start := the first run: its first bucket, zigzag-encoded (0, -1, 1, -2, ... -> 0, 1, 2, 3, ...);
//            a later run: its first bucket - (the previous run's last bucket + 1), so >= 0
//   shape := (run length - 1) << 3 | CountWidth
//   counts:  kBits1..kBits8: the run's counts packed least significant bits first, ceil(length x
//            bits / 8) bytes; kVarint: one varint per count
//
// Varints are LEB128 (7 bits a byte, low group first, high bit set on all but the last byte). The
// encoder gives each run the narrowest width its largest count fits: most buckets of a value hold
// 0-3 elements, so most runs cost 2 bits a bucket. Every count costs at least one bit, so a blob of
// n bytes decodes to at most 8n buckets: the decoder's output is bounded by its input.
//
// The decoder validates everything and never reads out of bounds, because blobs reach the SQL
// functions from arbitrary user queries. A library of its own, free of SQLite, like value_blob.h.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "schema/status.h"

namespace trialdb {

// The leading byte: the blob's format, so that the encoding can change without ambiguity.
inline constexpr uint8_t kHistogramFormatPacked = 0x01;

// How a run's counts are stored (the low 3 bits of its shape).
enum class CountWidth : uint8_t { kBits1 = 0, kBits2 = 1, kBits4 = 2, kBits8 = 3, kVarint = 4 };
inline constexpr int kCountWidthBits = 3;
inline constexpr uint64_t kCountWidthMask = (1u << kCountWidthBits) - 1;

// Buckets are numbered within +-kHistogramBucketLimit (more than the grid has: kernels/bucket_grid.h
// checks), and a run is at most kHistogramMaxRun buckets long: the decoder refuses anything else.
inline constexpr int64_t kHistogramBucketLimit = INT64_C(1) << 20;
inline constexpr int64_t kHistogramMaxRun = INT64_C(1) << 16;

// Writes runs into a blob. Runs are given in bucket order and may not overlap; a run's counts may
// be 0 inside it (they are stored as given, so the runs read back exactly).
class HistogramBlobWriter {
 public:
  void begin_run(int64_t first_bucket);
  void add_count(uint64_t count) {
    run_.push_back(count);
    run_max_ |= count;  // enough to choose the width: the same highest bit as the largest count
  }
  // A whole run at once: begin_run(first_bucket) and add_count of each of counts[0, length), for a
  // writer that keeps its runs' counts itself (no run may be open).
  void add_run(int64_t first_bucket, const uint64_t* counts, size_t length, uint64_t counts_or);
  // The same from 32-bit counts (a counter's own tables' width).
  void add_run(int64_t first_bucket, const uint32_t* counts, size_t length, uint64_t counts_or);
  // The blob (the format byte alone when no run was begun); the writer starts over, keeping its
  // buffer's room for the next blob.
  std::string finish();
  // Drops what was written: the writer starts over, keeping its room.
  void clear();

 private:
  void end_run();
  template <class Count>
  void write_run(int64_t first_bucket, const Count* counts, size_t length, uint64_t counts_or);
  // out_[0, used_) is the blob so far. out_ only grows: a run is written into room made ahead and
  // the blob copied out once, so a writer that goes on to the next value allocates nothing more.
  std::string out_{static_cast<char>(kHistogramFormatPacked)};
  size_t used_ = 1;
  std::vector<uint64_t> run_;  // the open run's counts
  uint64_t run_max_ = 0;       // their bitwise or
  int64_t run_first_ = 0;
  int64_t next_ = 0;  // the bucket after the last run's last
  bool open_ = false, first_run_ = true;
};

// Reads a blob's runs in order. Each next() validates the run it returns; error() says why the
// reading stopped early (ok at the end of a valid blob).
class HistogramBlobReader {
 public:
  explicit HistogramBlobReader(std::string_view blob);
  // The next run's first bucket and counts (valid until the next call); false at the end or on an
  // error.
  bool next(int64_t* first_bucket, const std::vector<uint64_t>** counts);
  const Status& error() const { return error_; }

 private:
  bool fail(const char* what);
  bool varint(uint64_t* out);
  const uint8_t* p_;
  const uint8_t* end_;
  std::vector<uint64_t> counts_;
  int64_t next_ = 0;
  bool first_run_ = true;
  Status error_;
};

// (bucket, count) of every non-empty bucket, in order. Status kInvalidInput naming what is wrong
// when the blob is not a histogram blob; *out then holds what was read before.
Status decode_histogram_blob(std::string_view blob, std::vector<std::pair<int64_t, uint64_t>>* out);

// The histogram as the JSON text the `histograms` view shows: {"<first bucket>": [count, ...], ...}
// without spaces, one member per run, e.g. {"-3":[1,0,2],"0":[7],"16001":[4]}; "{}" without runs.
Status histogram_blob_json(std::string_view blob, std::string* out);

}  // namespace trialdb
