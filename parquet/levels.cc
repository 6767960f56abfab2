// Definition levels in the RLE / bit-packed hybrid encoding (levels.h).
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

size_t run_length(const std::vector<uint8_t>& levels, size_t at) {
  size_t end = at;
  while (end < levels.size() && levels[end] == levels[at]) ++end;
  return end - at;
}

// An RLE run: header (count << 1 | 0), then the level in ceil(bit_width / 8) = 1 byte.
void put_rle_run(std::string& out, uint8_t level, size_t count) {
  put_varint(out, static_cast<uint64_t>(count) << 1);
  out.push_back(static_cast<char>(level));
}

// Bit-packed groups of eight levels, LSB first: header (groups << 1 | 1), then bit_width bytes
// per group.
void put_bit_packed(std::string& out, const std::vector<uint8_t>& levels, size_t from, size_t groups, int bit_width) {
  put_varint(out, (static_cast<uint64_t>(groups) << 1) | 1);
  uint32_t acc = 0;
  int bits = 0;
  for (size_t i = from; i < from + groups * 8; ++i) {
    const uint32_t level = i < levels.size() ? levels[i] : 0;
    acc |= level << bits;
    bits += bit_width;
    while (bits >= 8) {
      out.push_back(static_cast<char>(acc & 0xff));
      acc >>= 8;
      bits -= 8;
    }
  }
}

}  // namespace

std::string encode_levels(const std::vector<uint8_t>& levels, int bit_width) {
  std::string out;
  size_t i = 0;
  while (i < levels.size()) {
    const size_t run = run_length(levels, i);
    if (run >= kMinRleRun) {
      put_rle_run(out, levels[i], run);
      i += run;
      continue;
    }
    // Bit-pack whole groups of eight until a long run starts at a group boundary.
    size_t groups = 0;
    size_t j = i;
    while (j < levels.size() && run_length(levels, j) < kMinRleRun) {
      j += 8;
      ++groups;
    }
    put_bit_packed(out, levels, i, groups, bit_width);
    i = j;
  }
  return out;
}

}  // namespace trialdb::parquet
