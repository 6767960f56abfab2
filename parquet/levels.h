// Parquet's RLE / bit-packed hybrid encoding (the format specification's "Run Length Encoding /
// Bit-Packing Hybrid"): runs of one repeated value become RLE runs, the rest groups of eight
// bit-packed values. It carries the definition levels (trialdb's columns are flat and optional,
// so a level is 0 (NULL) or 1 (a value) and the bit width is 1) and the dictionary indices of
// dictionary-encoded pages.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace trialdb::parquet {

// The hybrid encoding of levels (each < 2^bit_width, bit_width 1..8), without the 4-byte length
// that data pages v1 put before it. A repeated level becomes an RLE run once it repeats
// kMinRleRun times; shorter stretches are bit-packed eight levels at a time (the last group padded
// with zeros, which a reader ignores because it knows the page's value count).
std::string encode_levels(const std::vector<uint8_t>& levels, int bit_width);
// The same for dictionary indices (each < 2^bit_width, bit_width 1..32).
std::string encode_indices(const std::vector<uint32_t>& indices, int bit_width);
// encode_levels of `count` times `level`, without the vector.
std::string encode_level_run(uint8_t level, size_t count, int bit_width);

inline constexpr size_t kMinRleRun = 8;

// The definition levels of a data page being filled. Until its first NULL a page's levels are
// all 1, one RLE run: only their count is kept, so a column without NULLs (most of the export's)
// costs no byte per value here and no scan when the page is encoded.
class PageLevels {
 public:
  void add(uint8_t level, size_t n = 1) {
    if (level == 1 && levels_.empty()) {
      present_ += n;
      return;
    }
    if (levels_.empty()) levels_.assign(present_, 1);
    levels_.insert(levels_.end(), n, level);
  }
  size_t size() const { return levels_.empty() ? present_ : levels_.size(); }
  std::string encode(int bit_width) const {
    return levels_.empty() ? encode_level_run(1, present_, bit_width) : encode_levels(levels_, bit_width);
  }
  void clear() {
    levels_.clear();
    present_ = 0;
  }

 private:
  size_t present_ = 0;           // the page's values while it has no NULL
  std::vector<uint8_t> levels_;  // every level, once it has one
};

}  // namespace trialdb::parquet
