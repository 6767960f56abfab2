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

// Values of a whole number of bytes each, little-endian: what bit-packing amounts to at such a
// width (the dictionary indices' usual widths), without shifting bits.
template <typename Word>
void put_whole_bytes(char* byte, std::span<const uint32_t> values) {
  for (const uint32_t v : values) {
    const auto word = static_cast<Word>(v);
    std::memcpy(byte, &word, sizeof word);
    byte += sizeof word;
  }
}

// Bit-packed groups of eight values, LSB first: header (groups << 1 | 1), then bit_width bytes
// per group; past the last value, zeros.
void put_bit_packed(std::string& out, std::span<const uint32_t> values, int bit_width) {
  const size_t groups = (values.size() + 7) / 8;
  put_varint(out, (static_cast<uint64_t>(groups) << 1) | 1);
  const size_t start = out.size();
  out.resize(start + groups * static_cast<size_t>(bit_width));  // zeros, the padding included
  char* byte = out.data() + start;
  static_assert(std::endian::native == std::endian::little, "the words are written as the host's bytes");
  constexpr int kByteBits = 8;
  if (bit_width == kByteBits) return put_whole_bytes<uint8_t>(byte, values);
  if (bit_width == 2 * kByteBits) return put_whole_bytes<uint16_t>(byte, values);
  if (bit_width == 4 * kByteBits) return put_whole_bytes<uint32_t>(byte, values);
  // Whole 32-bit words out of a 64-bit accumulator (bit_width <= 32, so it never overflows); a
  // group of eight ends on a byte boundary, so what is left at the end is whole bytes.
  constexpr int kWordBits = 32;
  uint64_t acc = 0;
  int bits = 0;
  for (const uint32_t v : values) {
    acc |= static_cast<uint64_t>(v) << bits;
    bits += bit_width;
    if (bits >= kWordBits) {
      const auto word = static_cast<uint32_t>(acc);
      std::memcpy(byte, &word, sizeof word);
      byte += sizeof word;
      acc >>= kWordBits;
      bits -= kWordBits;
    }
  }
  for (; bits > 0; bits -= kByteBits, acc >>= kByteBits) *byte++ = static_cast<char>(acc & 0xff);
}

// Where the run of values[at] ends: the first value after it that differs, or the end. Blocks of
// eight are compared without a branch per value (the key columns repeat a value over many rows).
size_t run_end(std::span<const uint32_t> values, size_t at) {
  const uint32_t v = values[at];
  size_t end = at + 1;
  constexpr size_t kBlock = 8;
  while (end + kBlock <= values.size()) {
    uint32_t differ = 0;
    for (size_t k = 0; k < kBlock; ++k) differ |= values[end + k] ^ v;
    if (differ != 0) break;
    end += kBlock;
  }
  while (end < values.size() && values[end] == v) ++end;
  return end;
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
  // Room for every value bit-packed and a few run headers, so that the string is not copied as it
  // grows (a page's indices are mostly one or the other: bit-packed or long runs).
  constexpr size_t kGroup = 8, kHeadersRoom = 64;
  out.reserve((values.size() + kGroup - 1) / kGroup * static_cast<size_t>(bit_width) + kHeadersRoom);
  size_t at = 0;
  while (at < values.size()) {
    if (long_run_at(values, at)) {
      const size_t end = run_end(values, at);
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
