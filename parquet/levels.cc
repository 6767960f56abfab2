// The RLE / bit-packed hybrid encoding of definition levels and dictionary indices (levels.h).
#include "parquet/levels.h"

namespace trialdb::parquet {

namespace {

void put_varint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

template <typename T>
size_t run_length(const std::vector<T>& values, size_t at) {
  size_t end = at;
  while (end < values.size() && values[end] == values[at]) ++end;
  return end - at;
}

// An RLE run: header (count << 1 | 0), then the value in ceil(bit_width / 8) bytes, little-endian.
void put_rle_run(std::string& out, uint32_t value, size_t count, int bit_width) {
  put_varint(out, static_cast<uint64_t>(count) << 1);
  for (int b = 0; b < (bit_width + 7) / 8; ++b) out.push_back(static_cast<char>((value >> (8 * b)) & 0xff));
}

// Bit-packed groups of eight values, LSB first: header (groups << 1 | 1), then bit_width bytes
// per group.
template <typename T>
void put_bit_packed(std::string& out, const std::vector<T>& values, size_t from, size_t groups, int bit_width) {
  put_varint(out, (static_cast<uint64_t>(groups) << 1) | 1);
  uint64_t acc = 0;
  int bits = 0;
  for (size_t i = from; i < from + groups * 8; ++i) {
    const uint64_t value = i < values.size() ? values[i] : 0;
    acc |= value << bits;
    bits += bit_width;
    while (bits >= 8) {
      out.push_back(static_cast<char>(acc & 0xff));
      acc >>= 8;
      bits -= 8;
    }
  }
}

template <typename T>
std::string encode_hybrid(const std::vector<T>& values, int bit_width) {
  std::string out;
  size_t i = 0;
  while (i < values.size()) {
    const size_t run = run_length(values, i);
    if (run >= kMinRleRun) {
      put_rle_run(out, values[i], run, bit_width);
      i += run;
      continue;
    }
    // Bit-pack whole groups of eight until a long run starts at a group boundary.
    size_t groups = 0;
    size_t j = i;
    while (j < values.size() && run_length(values, j) < kMinRleRun) {
      j += 8;
      ++groups;
    }
    put_bit_packed(out, values, i, groups, bit_width);
    i = j;
  }
  return out;
}

}  // namespace

std::string encode_levels(const std::vector<uint8_t>& levels, int bit_width) {
  return encode_hybrid(levels, bit_width);
}

std::string encode_level_run(uint8_t level, size_t count, int bit_width) {
  if (count < kMinRleRun) return encode_levels(std::vector<uint8_t>(count, level), bit_width);
  std::string out;
  put_rle_run(out, level, count, bit_width);
  return out;
}

std::string encode_indices(const std::vector<uint32_t>& indices, int bit_width) {
  return encode_hybrid(indices, bit_width);
}

}  // namespace trialdb::parquet
