// The RLE / bit-packed hybrid encoding of definition levels and dictionary indices (levels.h).
#include "parquet/levels.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <span>

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

// Bit-packed groups of eight values, LSB first: header (groups << 1 | 1), then bit_width bytes
// per group; past the last value, zeros.
void put_bit_packed(std::string& out, std::span<const uint32_t> values, int bit_width) {
  const size_t groups = (values.size() + 7) / 8;
  put_varint(out, (static_cast<uint64_t>(groups) << 1) | 1);
  const size_t start = out.size();
  out.resize(start + groups * static_cast<size_t>(bit_width));
  char* byte = out.data() + start;
  // Whole 32-bit words out of a 64-bit accumulator (bit_width <= 32, so it never overflows); a
  // group of eight ends on a byte boundary, so what is left at the end is whole bytes.
  static_assert(std::endian::native == std::endian::little, "the words are written as the host's bytes");
  constexpr int kWordBits = 32;
  uint64_t acc = 0;
  int bits = 0;
  for (size_t i = 0; i < groups * 8; ++i) {
    acc |= static_cast<uint64_t>(i < values.size() ? values[i] : 0) << bits;
    bits += bit_width;
    if (bits >= kWordBits) {
      const auto word = static_cast<uint32_t>(acc);
      std::memcpy(byte, &word, sizeof word);
      byte += sizeof word;
      acc >>= kWordBits;
      bits -= kWordBits;
    }
  }
  for (; bits > 0; bits -= 8, acc >>= 8) *byte++ = static_cast<char>(acc & 0xff);
}

// Whether the values from `at` start a run of at least kMinRleRun.
bool long_run_at(std::span<const uint32_t> values, size_t at) {
  if (values.size() - at < kMinRleRun) return false;
  for (size_t i = at + 1; i < at + kMinRleRun; ++i)
    if (values[i] != values[at]) return false;
  return true;
}

}  // namespace

std::string encode_runs(const ValueRuns& values, int bit_width) {
  const std::vector<ValueRuns::Run>& runs = values.runs();
  std::string out;
  std::vector<uint32_t> packed;  // the values of a bit-packed stretch, one by one
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
    packed.clear();
    while (at.run < runs.size() && runs[at.run].count - at.offset < kMinRleRun) {
      for (int i = 0; i < 8 && at.run < runs.size(); ++i) {
        packed.push_back(runs[at.run].value);
        at = advance(runs, at, 1);
      }
    }
    put_bit_packed(out, packed, bit_width);
  }
  return out;
}

std::string encode_values(std::span<const uint32_t> values, int bit_width) {
  std::string out;
  size_t at = 0;
  while (at < values.size()) {
    if (long_run_at(values, at)) {
      size_t end = at + kMinRleRun;
      while (end < values.size() && values[end] == values[at]) ++end;
      put_rle_run(out, values[at], end - at, bit_width);
      at = end;
      continue;
    }
    // Bit-pack whole groups of eight until a long run starts at a group boundary.
    size_t end = at;
    while (end < values.size() && !long_run_at(values, end)) end = std::min(end + 8, values.size());
    put_bit_packed(out, values.subspan(at, end - at), bit_width);
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
