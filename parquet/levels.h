// Parquet's RLE / bit-packed hybrid encoding (the format specification's "Run Length Encoding /
// Bit-Packing Hybrid"): runs of one repeated value become RLE runs, the rest groups of eight
// bit-packed values. It carries the definition levels (trialdb's columns are flat and optional,
// so a level is 0 (NULL) or 1 (a value) and the bit width is 1) and the dictionary indices of
// dictionary-encoded pages.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace trialdb::parquet {

// Values as runs of one value repeated, each run as long as it goes (the next one's value
// differs): what the encoding is made from, kept this way by the pages being filled, so that a
// value repeated row after row (a name in every row of a tensor's histogram) costs a count.
class ValueRuns {
 public:
  struct Run {
    uint32_t value;
    size_t count;
  };
  void add(uint32_t value, size_t n = 1) {
    if (n == 0) return;
    if (!runs_.empty() && runs_.back().value == value) runs_.back().count += n;
    else runs_.push_back({value, n});
    size_ += n;
  }
  size_t size() const { return size_; }
  const std::vector<Run>& runs() const { return runs_; }
  void clear() {
    runs_.clear();
    size_ = 0;
  }

 private:
  std::vector<Run> runs_;
  size_t size_ = 0;  // values
};

// The hybrid encoding of the values (each < 2^bit_width, bit_width 1..32), without the 4-byte
// length that data pages v1 put before it. A repeated value becomes an RLE run once it repeats
// kMinRleRun times; shorter stretches are bit-packed eight values at a time (the last group padded
// with zeros, which a reader ignores because it knows the page's value count).
std::string encode_runs(const ValueRuns& values, int bit_width);
// The same of values given one by one (dictionary indices, which rarely repeat in numeric columns).
std::string encode_values(std::span<const uint32_t> values, int bit_width);
// The same of levels (bit_width 1..8) given one by one.
std::string encode_levels(const std::vector<uint8_t>& levels, int bit_width);

inline constexpr size_t kMinRleRun = 8;

// The definition levels of a data page being filled, as runs: a column without NULLs (most of
// the export's) costs a count, not a byte per value, and one RLE run when the page is encoded.
class PageLevels {
 public:
  void add(uint8_t level, size_t n = 1) { runs_.add(level, n); }
  size_t size() const { return runs_.size(); }
  std::string encode(int bit_width) const { return encode_runs(runs_, bit_width); }
  void clear() { runs_.clear(); }

 private:
  ValueRuns runs_;
};

}  // namespace trialdb::parquet
