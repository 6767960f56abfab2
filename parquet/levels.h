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

inline constexpr size_t kMinRleRun = 8;

}  // namespace trialdb::parquet
