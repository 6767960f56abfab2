// Reads of a TrialSource for tests that compare the bytes: each answers what the read left in
// its pointer argument, as a string, and throws the failed Status as Error, so a test states the expected bytes
// (EXPECT_EQ(read_bytes(src, "k"), "...")) or the expected failure (EXPECT_THROW / its message)
// in one expression.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ingest/source/source.h"

namespace trialdb {

inline std::optional<std::string> as_string(const std::optional<ReadBuffer>& bytes) {
  if (!bytes) return std::nullopt;
  return std::string(bytes->view());
}

inline std::optional<std::string> read_bytes(TrialSource& src, const std::string& path) {
  std::optional<ReadBuffer> out;
  if (Status st = src.read(path, &out); !st.is_ok()) throw Error(st);
  return as_string(out);
}

inline std::optional<std::string> read_range_bytes(TrialSource& src, const std::string& path, uint64_t offset,
                                                   uint64_t length) {
  std::optional<ReadBuffer> out;
  if (Status st = src.read_range(path, offset, length, &out); !st.is_ok()) throw Error(st);
  return as_string(out);
}

inline std::vector<std::optional<std::string>> read_ranges_bytes(TrialSource& src,
                                                                 const std::vector<TrialSource::Range>& ranges) {
  std::vector<std::optional<ReadBuffer>> out;
  if (Status st = src.read_ranges(ranges, &out); !st.is_ok()) throw Error(st);
  std::vector<std::optional<std::string>> strings;
  for (const auto& bytes : out) strings.push_back(as_string(bytes));
  return strings;
}

inline std::unique_ptr<MappedRange> mapped_range(TrialSource& src, const std::string& path, uint64_t offset,
                                                 uint64_t length) {
  std::unique_ptr<MappedRange> out;
  if (Status st = src.map_range(path, offset, length, &out); !st.is_ok()) throw Error(st);
  return out;
}

}  // namespace trialdb
