// The RLE / bit-packed hybrid encoding of definition levels and dictionary indices (levels.h).
#include "parquet/levels.h"

#include <algorithm>

namespace trialdb::parquet {

namespace {

void put_varint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

// An RLE run: header (count << 1 | 0), then the value in ceil(bit_width / 8) bytes, little-endian.
void put_rle_run(std::string& out, uint32_t value, size_t count, int bit_width) {
  put_varint(out, static_cast<uint64_t>(count) << 1);
  for (int b = 0; b < (bit_width + 7) / 8; ++b) out.push_back(static_cast<char>((value >> (8 * b)) & 0xff));
}

// A position among the values: the run it is in and how far into it.
struct Position {
  size_t run = 0, offset = 0;
};

// The position `n` values after `at` (the end, runs.size(), at most).
Position advance(const std::vector<ValueRuns::Run>& runs, Position at, size_t n) {
  while (at.run < runs.size() && n > 0) {
    const size_t step = std::min(n, runs[at.run].count - at.offset);
    at.offset += step, n -= step;
    if (at.offset == runs[at.run].count) ++at.run, at.offset = 0;
  }
  return at;
}

// Bit-packed groups of eight values from `from`, LSB first: header (groups << 1 | 1), then
// bit_width bytes per group; past the last value, zeros.
void put_bit_packed(std::string& out, const std::vector<ValueRuns::Run>& runs, Position from, size_t groups,
                    int bit_width) {
  put_varint(out, (static_cast<uint64_t>(groups) << 1) | 1);
  uint64_t acc = 0;
  int bits = 0;
  Position at = from;
  for (size_t i = 0; i < groups * 8; ++i) {
    const uint64_t value = at.run < runs.size() ? runs[at.run].value : 0;
    at = advance(runs, at, 1);
    acc |= value << bits;
    bits += bit_width;
    while (bits >= 8) {
      out.push_back(static_cast<char>(acc & 0xff));
      acc >>= 8;
      bits -= 8;
    }
  }
}

}  // namespace

std::string encode_runs(const ValueRuns& values, int bit_width) {
  const std::vector<ValueRuns::Run>& runs = values.runs();
  std::string out;
  Position at;
  while (at.run < runs.size()) {
    // The values left of a run: an RLE run of their own once there are kMinRleRun of them.
    const size_t left = runs[at.run].count - at.offset;
    if (left >= kMinRleRun) {
      put_rle_run(out, runs[at.run].value, left, bit_width);
      ++at.run, at.offset = 0;
      continue;
    }
    // Bit-pack whole groups of eight until a long run starts at a group boundary.
    size_t groups = 0;
    Position end = at;
    while (end.run < runs.size() && runs[end.run].count - end.offset < kMinRleRun) {
      end = advance(runs, end, 8);
      ++groups;
    }
    put_bit_packed(out, runs, at, groups, bit_width);
    at = end;
  }
  return out;
}

std::string encode_levels(const std::vector<uint8_t>& levels, int bit_width) {
  ValueRuns runs;
  for (const uint8_t level : levels) runs.add(level);
  return encode_runs(runs, bit_width);
}

}  // namespace trialdb::parquet
