// Parquet's PLAIN encoding of one value: little-endian INT64 and IEEE DOUBLE, and BYTE_ARRAY as a
// 4-byte little-endian length before the bytes. (BOOLEAN values are bit-packed per page, in
// column_writer.cc.)
#pragma once
#include <bit>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace trialdb::parquet {

static_assert(std::endian::native == std::endian::little, "PLAIN encoding is written as the host's bytes");

inline void append_plain(std::string& out, int64_t v) { out.append(reinterpret_cast<const char*>(&v), sizeof v); }
inline void append_plain(std::string& out, double v) { out.append(reinterpret_cast<const char*>(&v), sizeof v); }
inline void append_plain_length(std::string& out, uint32_t n) {
  out.append(reinterpret_cast<const char*>(&n), sizeof n);
}
inline void append_plain(std::string& out, std::string_view v) {
  append_plain_length(out, static_cast<uint32_t>(v.size()));
  out.append(v);
}

}  // namespace trialdb::parquet
