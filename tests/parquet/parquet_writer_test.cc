// The Parquet writer: the level encoding byte for byte, the statistics' rules, and files read back
// by DuckDB (every value, NULLs, row groups and pages as asked for, statistics in parquet_metadata).
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <functional>
#include <fstream>
#include <limits>
#include <span>

#include "common/temp_dir.h"
#include "duckdb_query.h"
#include "parquet/column_writer.h"
#include "parquet/file_writer.h"
#include "parquet/levels.h"
#include "parquet/number_dictionary.h"
#include "parquet/statistics.h"
#include "schema/status.h"

namespace trialdb::parquet {
namespace {

using test::Cell;
using test::double_cell;
using test::duckdb_rows;

TEST(Levels, LongRunsAreRleRuns) {
  // 20 ones: header 20 << 1 = 40, then the level in one byte.
  EXPECT_EQ(encode_levels(std::vector<uint8_t>(20, 1), 1), std::string("\x28\x01", 2));
  // 300 zeros: the count needs a two-byte varint (600 = 0xd8 0x04).
  EXPECT_EQ(encode_levels(std::vector<uint8_t>(300, 0), 1), std::string("\xd8\x04\x00", 3));
}

TEST(Levels, ShortStretchesAreBitPackedLsbFirst) {
  // One group of eight: header 1 << 1 | 1, then 1,0,1,1,0,0,0,1 as bits from the lowest.
  EXPECT_EQ(encode_levels({1, 0, 1, 1, 0, 0, 0, 1}, 1), std::string("\x03\x8d", 2));
  // Three levels are padded to a group of eight.
  EXPECT_EQ(encode_levels({1, 1, 0}, 1), std::string("\x03\x03", 2));
  // Bit-packed, then a run of ten ones starting at a group boundary.
  std::vector<uint8_t> mixed = {0, 1, 0, 1, 0, 1, 0, 1};
  mixed.insert(mixed.end(), 10, 1);
  EXPECT_EQ(encode_levels(mixed, 1), std::string("\x03\xaa\x14\x01", 4));
}

// The hybrid encoding as the format specification describes it, value by value: the reference
// encode_runs, which walks runs, and encode_values must match byte for byte.
std::string reference_hybrid(const std::vector<uint32_t>& values, int bit_width) {
  const auto varint = [](std::string& out, uint64_t v) {
    for (; v >= 0x80; v >>= 7) out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    out.push_back(static_cast<char>(v));
  };
  const auto run_length = [&](size_t at) {
    size_t end = at;
    while (end < values.size() && values[end] == values[at]) ++end;
    return end - at;
  };
  std::string out;
  for (size_t i = 0; i < values.size();) {
    if (const size_t run = run_length(i); run >= kMinRleRun) {
      varint(out, run << 1);
      for (int b = 0; b < (bit_width + 7) / 8; ++b) out.push_back(static_cast<char>((values[i] >> (8 * b)) & 0xff));
      i += run;
      continue;
    }
    size_t groups = 0, j = i;
    for (; j < values.size() && run_length(j) < kMinRleRun; j += 8) ++groups;
    varint(out, groups << 1 | 1);
    uint64_t acc = 0;
    int bits = 0;
    for (size_t k = i; k < i + groups * 8; ++k) {
      acc |= static_cast<uint64_t>(k < values.size() ? values[k] : 0) << bits;
      for (bits += bit_width; bits >= 8; bits -= 8, acc >>= 8) out.push_back(static_cast<char>(acc & 0xff));
    }
    i = j;
  }
  return out;
}

TEST(Levels, RunsEncodeAsTheValuesOneByOne) {
  uint64_t seed = 7;
  const auto next = [&seed](uint64_t n) {
    return (seed = seed * 6364136223846793005u + 1442695040888963407u) >> 33 & (n - 1);
  };
  for (const int bit_width : {1, 2, 3, 7, 8, 13, 16, 24, 32})
    for (int trial = 0; trial < 200; ++trial) {
      ValueRuns runs;
      std::vector<uint32_t> values;
      // Few distinct values (runs of every length), with bits set all over the width.
      const uint64_t distinct = trial % 2 ? 4 : 2;
      const uint32_t max_value = bit_width == 32 ? ~0u : (1u << bit_width) - 1;
      while (values.size() < 20 + static_cast<size_t>(trial) * 3) {
        const auto v = static_cast<uint32_t>(next(distinct) * 0x9E3779B9u) & max_value;
        const size_t n = next(4) == 0 ? 1 + next(32) : 1 + next(4);
        runs.add(v, n);
        values.insert(values.end(), n, v);
      }
      ASSERT_EQ(runs.size(), values.size());
      ASSERT_EQ(encode_runs(runs, bit_width), reference_hybrid(values, bit_width)) << bit_width << " " << trial;
      ASSERT_EQ(encode_values(values, bit_width), reference_hybrid(values, bit_width)) << bit_width << " " << trial;
    }
}

// A page's levels, kept as runs, encode as the levels themselves.
TEST(Levels, PageLevelsEncodeTheLevelsAdded) {
  PageLevels page;
  std::vector<uint8_t> levels;
  const auto add = [&](uint8_t level, size_t n) {
    page.add(level, n);
    levels.insert(levels.end(), n, level);
    EXPECT_EQ(page.size(), levels.size());
    EXPECT_EQ(page.encode(1), encode_levels(levels, 1));
  };
  add(1, 20);
  add(1, 1);
  add(0, 3);
  add(1, 12);
  page.clear();
  levels.clear();
  EXPECT_EQ(page.size(), 0u);
  add(0, 1);
  add(1, 9);
}

// A span's statistics are those of its values added one by one: NaN skipped, the first of equal
// values kept (so a zero's sign is the first zero's until to_thrift normalizes it).
TEST(Statistics, ASpanCountsAsItsValuesOneByOne) {
  const double nan = std::nan(""), inf = std::numeric_limits<double>::infinity();
  const std::vector<std::vector<double>> spans = {
      {}, {nan}, {nan, -0.0, 0.0, nan}, {3.5, -inf, 2.0, inf, -7.25}, {inf}, {-inf, -inf}, {1e-300, -1e-300, 0.0}};
  for (const auto& values : spans) {
    ColumnStatistics one(ColumnType::kDouble), all(ColumnType::kDouble);
    one.add(1.5);
    all.add(1.5);
    for (const double v : values) one.add(v);
    all.add_values(values);
    EXPECT_EQ(all.to_thrift(), one.to_thrift()) << values.size();
  }
  const std::vector<int64_t> ints = {5, -3, std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min(),
                                     0};
  ColumnStatistics one(ColumnType::kInt64), all(ColumnType::kInt64);
  for (const int64_t v : ints) one.add(v);
  all.add_values(ints);
  EXPECT_EQ(all.to_thrift(), one.to_thrift());
}

TEST(Statistics, DoublesSkipNaNAndSignZeros) {
  ColumnStatistics s(ColumnType::kDouble);
  s.add(std::nan(""));
  s.add(0.0);
  s.add(2.5);
  s.add_null();
  const format::Statistics t = s.to_thrift();
  EXPECT_EQ(t.null_count, 1);
  ASSERT_TRUE(t.__isset.min_value && t.__isset.max_value);
  double lo = 0, hi = 0;
  std::memcpy(&lo, t.min_value.data(), 8);
  std::memcpy(&hi, t.max_value.data(), 8);
  EXPECT_TRUE(std::signbit(lo)) << "a zero minimum is written -0.0";
  EXPECT_EQ(hi, 2.5);
}

TEST(Statistics, OnlyNaNOrOnlyNullHasNoBounds) {
  ColumnStatistics s(ColumnType::kDouble);
  s.add(std::nan(""));
  EXPECT_FALSE(s.to_thrift().__isset.min_value);
}

TEST(Statistics, StringsCompareAsUnsignedBytesAndLongOnesDropBounds) {
  ColumnStatistics s(ColumnType::kString);
  s.add(std::string_view("\xc3\xa9"));  // é, above every ASCII byte unsigned
  s.add(std::string_view("z"));
  EXPECT_EQ(s.to_thrift().min_value, "z");
  EXPECT_EQ(s.to_thrift().max_value, "\xc3\xa9");
  s.add(std::string(kMaxStatisticsBytes + 1, 'a'));
  EXPECT_FALSE(s.to_thrift().__isset.min_value);
}

class StringSink : public ByteSink {
 public:
  void write(std::string_view bytes) override { data += bytes; }
  std::string data;
};

TEST(FileWriter, ValuesMustFillRowsExactly) {
  StringSink sink;
  FileWriter w({{"a", ColumnType::kInt64}, {"b", ColumnType::kInt64}}, sink);
  w.add(int64_t{1});
  EXPECT_THROW(w.end_row(), Error);
}

TEST(FileWriter, ARunsColumnsMustHaveItsLength) {
  StringSink sink;
  FileWriter w({{"a", ColumnType::kInt64}, {"b", ColumnType::kDouble}}, sink);
  w.add_repeated(int64_t{1}, 3);
  const std::vector<double> two = {1.0, 2.0};
  EXPECT_THROW(w.add_values(two), Error);
}

// Rows given as runs (a key repeated over the run, a span of values per column) make the file
// the same rows given one by one make, byte for byte: the same pages, closed after the same
// values (small pages, so that runs cross them), the same statistics, dictionary and its
// overflow into PLAIN pages.
TEST(FileWriter, RunsOfRowsMakeTheFileRowsOneByOneMake) {
  const std::vector<Column> columns = {{"name", ColumnType::kString},  {"long", ColumnType::kString},
                                       {"flag", ColumnType::kBoolean}, {"step", ColumnType::kInt64},
                                       {"scale", ColumnType::kDouble}, {"edge", ColumnType::kDouble},
                                       {"count", ColumnType::kInt64}};
  constexpr int kRuns = 3000;
  // 0 to 12, and every hundredth run longer than the writer's blocks of repeated values (64).
  const auto run_length = [](int r) { return static_cast<size_t>(r % 100 == 3 ? 150 + r % 7 : r * 7919 % 13); };
  const auto name = [](int r) { return "layer" + std::to_string(r % 5); };
  // 400-byte strings, distinct per run: the dictionary outgrows kMaxDictionaryBytes half-way.
  const auto long_text = [](int r) { return std::string(400, static_cast<char>('a' + r % 26)) + std::to_string(r); };
  static_assert(kRuns * 400 > kMaxDictionaryBytes, "the long strings outgrow the dictionary");
  const auto edge = [](int r, size_t i) { return std::ldexp(static_cast<double>(i + 1), r % 40 - 20); };
  const auto count = [](int r, size_t i) { return static_cast<int64_t>((r * 31 + i * 17) % 1000); };
  const WriterOptions options{.row_group_bytes = 1u << 30, .page_bytes = 4u << 10};

  StringSink one_by_one;
  {
    FileWriter w(columns, one_by_one, options);
    for (int r = 0; r < kRuns; ++r)
      for (size_t i = 0; i < run_length(r); ++i) {
        if (r % 6 == 1) w.add_null();
        else w.add(std::string_view(name(r)));
        w.add(std::string_view(long_text(r)));
        w.add(r % 3 == 0);
        w.add(int64_t{r});
        if (r % 4 == 2) w.add_null();
        else w.add(r / 8.0);
        w.add(edge(r, i));
        w.add(count(r, i));
        w.end_row();
      }
    w.finish();
  }
  // The edges and counts as spans: without keys; with keys that name each value (the counts by
  // themselves); with keys that name many values (the position in the run), which the dictionary
  // must tell apart by the values' bits.
  enum class Keys { kNone, kNaming, kPosition };
  const auto write_runs = [&](Keys keyed) {
    StringSink runs;
    FileWriter w(columns, runs, options);
    for (int r = 0; r < kRuns; ++r) {
      const size_t n = run_length(r);
      std::vector<double> edges;
      std::vector<int64_t> counts, edge_keys, count_keys;
      for (size_t i = 0; i < n; ++i) {
        edges.push_back(edge(r, i));
        counts.push_back(count(r, i));
        const bool naming = keyed == Keys::kNaming;
        edge_keys.push_back(naming ? (r % 40) * 1000 + static_cast<int64_t>(i) : static_cast<int64_t>(i));
        count_keys.push_back(naming ? counts.back() : static_cast<int64_t>(i));
      }
      if (r % 6 == 1) w.add_nulls(n);
      else w.add_repeated(std::string_view(name(r)), n);
      w.add_repeated(std::string_view(long_text(r)), n);
      w.add_repeated(r % 3 == 0, n);
      w.add_repeated(int64_t{r}, n);
      if (r % 4 == 2) w.add_nulls(n);
      else w.add_repeated(r / 8.0, n);
      if (keyed == Keys::kNone) {
        w.add_values(edges);
        w.add_values(counts);
      } else {
        w.add_values(edges, edge_keys);
        w.add_values(counts, count_keys);
      }
      w.end_row();
    }
    w.finish();
    return runs.data;
  };
  EXPECT_GT(one_by_one.data.size(), size_t{100} << 10);  // many pages
  for (const Keys keyed : {Keys::kNone, Keys::kNaming, Keys::kPosition}) {
    const std::string runs = write_runs(keyed);
    EXPECT_EQ(runs.size(), one_by_one.data.size()) << static_cast<int>(keyed);
    EXPECT_TRUE(runs == one_by_one.data) << static_cast<int>(keyed);
  }
}

// A keyed lookup gives the table's index whatever the key: a key naming two values, and a key
// cached before clear() naming a value the new dictionary holds at another index.
TEST(NumberDictionary, KeysFindTheTablesIndexOnly) {
  constexpr uint32_t kNotCached = NumberDictionary::kNotCached;
  NumberDictionary d;
  const uint64_t a = std::bit_cast<uint64_t>(2.5), b = std::bit_cast<uint64_t>(-0.0), zero = 0;
  EXPECT_EQ(d.cached(zero, 7), kNotCached);  // an empty slot holds no value, not +0.0
  EXPECT_EQ(d.insert(a, 7), std::make_pair(0u, true));
  EXPECT_EQ(d.cached(a, 7), 0u);
  EXPECT_EQ(d.cached(b, 7), kNotCached);
  EXPECT_EQ(d.cached(zero, 8), kNotCached);
  EXPECT_EQ(d.insert(b, 7), std::make_pair(1u, true));
  EXPECT_EQ(d.cached(b, 7), 1u);
  EXPECT_EQ(d.cached(a, 7), kNotCached);  // the key now names b
  EXPECT_EQ(d.insert(a, 7), std::make_pair(0u, false));
  EXPECT_EQ(d.insert(a), std::make_pair(0u, false));
  d.clear();
  EXPECT_EQ(d.cached(a, 7), kNotCached);
  EXPECT_EQ(d.insert(b), std::make_pair(0u, true));
  EXPECT_EQ(d.insert(a, 7), std::make_pair(1u, true));
  EXPECT_EQ(d.cached(a, 7), 1u);
  EXPECT_EQ(d.size(), 2u);
}

// histogram_buckets names each edge by its bucket, negative for negative values: the edges of a
// value's negative buckets and of its positive ones stay cached side by side, whatever the
// magnitudes (modulo a power of two, bucket -(2^17 - d) is bucket 2^17 + d).
TEST(NumberDictionary, NegativeKeysKeepOutOfThePositiveOnesSlots) {
  NumberDictionary d;
  constexpr int64_t kMirror = int64_t{1} << 17;
  for (int64_t offset = 1; offset <= 1000; offset += 37) {
    const int64_t positive = kMirror + offset, negative = -(kMirror - offset);
    const uint64_t p = std::bit_cast<uint64_t>(static_cast<double>(positive));
    const uint64_t n = std::bit_cast<uint64_t>(static_cast<double>(negative));
    const uint32_t p_index = d.insert(p, positive).first, n_index = d.insert(n, negative).first;
    EXPECT_EQ(d.cached(p, positive), p_index) << offset;
    EXPECT_EQ(d.cached(n, negative), n_index) << offset;
  }
}

TEST(FileWriter, KeyedValuesNeedAKeyEach) {
  StringSink sink;
  FileWriter w({{"a", ColumnType::kDouble}}, sink);
  const std::vector<double> two = {1.0, 2.0};
  const std::vector<int64_t> one_key = {1};
  EXPECT_THROW(w.add_values(two, one_key), Error);
}

// Mostly distinct numbers in a column's first page are PLAIN once kDistinctProbeValues of them
// are in, not dictionary entries and indices until the page is full; numbers that repeat stay
// dictionary-encoded past the probe.
TEST(ColumnWriter, MostlyDistinctNumbersArePlainAfterTheProbe) {
  constexpr size_t kPageBytes = 1u << 20;
  ColumnWriter distinct({"measurement", ColumnType::kDouble}, kPageBytes);
  ColumnWriter repeated({"edge", ColumnType::kDouble}, kPageBytes);
  for (size_t i = 0; i < kDistinctProbeValues; ++i) {
    distinct.add(static_cast<double>(i) * 1.25);
    repeated.add(static_cast<double>(i % 100));
  }
  const size_t levels = kDistinctProbeValues / 8;  // the level runs, as the page counts them
  EXPECT_EQ(distinct.uncompressed_bytes(), kDistinctProbeValues * sizeof(double) + levels);
  EXPECT_EQ(repeated.uncompressed_bytes(), 100 * sizeof(double) + kDistinctProbeValues * sizeof(uint32_t) + levels);
}

class DuckDbReadBack : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::string why = test::duckdb_unavailable(); !why.empty()) {
      if (why == "node is not installed") GTEST_SKIP() << why;
      FAIL() << why;
    }
  }
  std::string write_file(const std::vector<Column>& columns, WriterOptions options,
                         const std::function<void(FileWriter&)>& rows) {
    const std::string path = dir_ / "t.parquet";
    StringSink sink;
    FileWriter w(columns, sink, options);
    rows(w);
    w.finish();
    std::ofstream(path, std::ios::binary) << sink.data;
    return path;
  }
  test::TempDir dir_{"trialdb_parquet"};
};

constexpr int kRows = 5000;

std::string bytes_of(int i) { return std::string(static_cast<size_t>(i % 4), static_cast<char>(i & 0xff)); }

std::string text_of(int i) { return i % 7 == 0 ? std::string("é") + std::to_string(i) : "t" + std::to_string(i); }

TEST_F(DuckDbReadBack, EveryValueNullAndRowGroupComesBack) {
  const std::vector<Column> columns = {{"b", ColumnType::kBoolean},
                                       {"i", ColumnType::kInt64},
                                       {"d", ColumnType::kDouble},
                                       {"s", ColumnType::kString},
                                       {"x", ColumnType::kBytes}};
  // Small row groups and pages, so the file has several of both.
  const std::string path = write_file(columns, {.row_group_bytes = 32 << 10, .page_bytes = 4 << 10}, [](FileWriter& w) {
    for (int i = 0; i < kRows; ++i) {
      if (i % 3 == 0) w.add_null();
      else w.add(i % 2 == 0);
      if (i % 5 == 0) w.add_null();
      else w.add(static_cast<int64_t>(int64_t{i} * 1000003 - 2500000000LL));
      if (i % 11 == 0) w.add_null();
      else w.add(i == 1 ? std::numeric_limits<double>::infinity() : i / 3.0 - 700);
      w.add(std::string_view(text_of(i)));
      if (i % 2) w.add_null();
      else w.add(std::string_view(bytes_of(i)));
      w.end_row();
    }
  });
  const auto rows = duckdb_rows({"SELECT b, i, d, s, x FROM read_parquet('" + path + "')"});
  ASSERT_EQ(rows.size(), static_cast<size_t>(kRows));
  for (int i = 0; i < kRows; ++i) {
    const auto& r = rows[static_cast<size_t>(i)];
    EXPECT_EQ(r[0], i % 3 == 0 ? Cell() : Cell(i % 2 == 0 ? "1" : "0")) << i;
    EXPECT_EQ(r[1], i % 5 == 0 ? Cell() : Cell(std::to_string(int64_t{i} * 1000003 - 2500000000LL))) << i;
    EXPECT_EQ(r[2], i % 11 == 0 ? Cell()
                                : Cell(double_cell(i == 1 ? std::numeric_limits<double>::infinity() : i / 3.0 - 700)))
        << i;
    EXPECT_EQ(r[3], Cell(text_of(i))) << i;
    EXPECT_EQ(r[4], i % 2 ? Cell() : Cell(test::hex_cell(bytes_of(i)))) << i;
  }
  // Several row groups, each with statistics DuckDB reads: the file's nulls add up, the bounds of
  // i are the written extremes, and the UTF8 column is a string.
  const auto meta =
      duckdb_rows({"SELECT count(DISTINCT row_group_id), sum(stats_null_count) FILTER (WHERE path_in_schema = 'i'), "
                   "min(CASE WHEN path_in_schema = 'i' THEN TRY_CAST(stats_min_value AS BIGINT) END), "
                   "max(CASE WHEN path_in_schema = 'i' THEN TRY_CAST(stats_max_value AS BIGINT) END), "
                   "bool_and(stats_null_count IS NOT NULL), bool_and(compression = 'ZSTD') "
                   "FROM parquet_metadata('" +
                   path + "')"});
  ASSERT_EQ(meta.size(), 1u);
  EXPECT_GT(std::stoi(*meta[0][0]), 2);
  EXPECT_EQ(meta[0][1], Cell(std::to_string(kRows / 5)));
  EXPECT_EQ(meta[0][2], Cell(std::to_string(int64_t{1} * 1000003 - 2500000000LL)));
  EXPECT_EQ(meta[0][3], Cell(std::to_string(int64_t{kRows - 1} * 1000003 - 2500000000LL)));
  EXPECT_EQ(meta[0][4], Cell("1"));
  EXPECT_EQ(meta[0][5], Cell("1"));
  const auto types = duckdb_rows({"SELECT column_type FROM (DESCRIBE SELECT * FROM read_parquet('" + path + "'))"});
  ASSERT_EQ(types.size(), 5u);
  EXPECT_EQ(types[0][0], Cell("BOOLEAN"));
  EXPECT_EQ(types[1][0], Cell("BIGINT"));
  EXPECT_EQ(types[2][0], Cell("DOUBLE"));
  EXPECT_EQ(types[3][0], Cell("VARCHAR"));
  EXPECT_EQ(types[4][0], Cell("BLOB"));
}

// Strings are dictionary-encoded: a column of a few names repeated row after row is a dictionary
// page and pages of indices, far smaller than the names; a column whose distinct strings outgrow
// the dictionary goes on in PLAIN pages within the same chunk. DuckDB reads both back exactly.
TEST_F(DuckDbReadBack, StringsAreDictionaryEncodedAndOutgrowTheirDictionaryIntoPlainPages) {
  constexpr int kNamedRows = 6000;
  const auto name = [](int i) { return "layer" + std::to_string(i / 700 % 5) + ".weight_" + std::string(40, 'w'); };
  const auto distinct = [](int i) { return std::string(400, static_cast<char>('a' + i % 26)) + std::to_string(i); };
  static_assert(kNamedRows * 400 > 2 * kMaxDictionaryBytes, "the distinct strings outgrow the dictionary");
  const std::string path = write_file({{"name", ColumnType::kString}, {"many", ColumnType::kString}},
                                      {.page_bytes = 16 << 10}, [&](FileWriter& w) {
                                        for (int i = 0; i < kNamedRows; ++i) {
                                          if (i % 9 == 4) w.add_null();
                                          else w.add(std::string_view(name(i)));
                                          w.add(std::string_view(distinct(i)));
                                          w.end_row();
                                        }
                                      });
  const auto rows = duckdb_rows({"SELECT name, many FROM read_parquet('" + path + "')"});
  ASSERT_EQ(rows.size(), static_cast<size_t>(kNamedRows));
  for (int i = 0; i < kNamedRows; ++i) {
    ASSERT_EQ(rows[static_cast<size_t>(i)][0], i % 9 == 4 ? Cell() : Cell(name(i))) << i;
    ASSERT_EQ(rows[static_cast<size_t>(i)][1], Cell(distinct(i))) << i;
  }
  const auto meta =
      duckdb_rows({"SELECT path_in_schema, encodings, dictionary_page_offset IS NOT NULL, "
                   "total_compressed_size, stats_min_value, stats_max_value "
                   "FROM parquet_metadata('" +
                   path + "') ORDER BY column_id"});
  ASSERT_EQ(meta.size(), 2u);  // one row group
  EXPECT_NE(meta[0][1]->find("PLAIN_DICTIONARY"), std::string::npos) << *meta[0][1];
  EXPECT_EQ(meta[0][2], Cell("1"));
  EXPECT_LT(std::stoll(*meta[0][3]), 2000) << "6,000 names of 53 bytes";
  EXPECT_EQ(meta[0][4], Cell(name(0)));
  EXPECT_EQ(meta[0][5], Cell(name(4 * 700)));
  EXPECT_EQ(meta[1][2], Cell("1"));
  EXPECT_NE(meta[1][1]->find("PLAIN"), std::string::npos) << *meta[1][1];
  EXPECT_EQ(meta[1][4], Cell(distinct(0)));
  std::string largest;
  for (int i = 0; i < kNamedRows; ++i) largest = std::max(largest, distinct(i));
  EXPECT_EQ(meta[1][5], Cell(largest));
}

// Numbers are dictionary-encoded too (histogram_buckets' steps, edges and counts: few distinct
// values over millions of rows), keyed by their bits (-0.0 and +0.0 stay apart); a column of
// mostly distinct numbers is PLAIN, without a dictionary page. Each reads back exactly.
TEST_F(DuckDbReadBack, NumbersAreDictionaryEncodedUntilTheDictionaryDoesNotPay) {
  constexpr int64_t kRows = 60000;
  const auto edge = [](int64_t i) {
    if (i % 7 == 3) return -0.0;
    if (i % 7 == 5) return 0.0;
    return std::ldexp(1.0, static_cast<int>(i % 300) - 150);
  };
  const auto count = [](int64_t i) { return i * i % 97; };
  const auto measurement = [](int64_t i) { return static_cast<double>(i) * 1.25 + 0.5; };
  const std::string path = write_file({{"step", ColumnType::kInt64},
                                       {"edge", ColumnType::kDouble},
                                       {"count", ColumnType::kInt64},
                                       {"measurement", ColumnType::kDouble}},
                                      {.page_bytes = 16 << 10}, [&](FileWriter& w) {
                                        for (int64_t i = 0; i < kRows; i += 100) {
                                          std::vector<double> edges, measurements;
                                          std::vector<int64_t> counts;
                                          for (int64_t j = i; j < i + 100; ++j) {
                                            edges.push_back(edge(j));
                                            counts.push_back(count(j));
                                            measurements.push_back(measurement(j));
                                          }
                                          w.add_repeated(i / 1000, 100);  // a step: a run of rows
                                          w.add_values(edges);
                                          w.add_values(counts);
                                          w.add_values(measurements);
                                          w.end_row();
                                        }
                                      });
  const auto rows =
      duckdb_rows({"SELECT count(*), count(*) FILTER (WHERE step = file_row_number // 1000 "
                   "AND edge = CASE WHEN file_row_number % 7 IN (3, 5) THEN 0 ELSE pow(2.0, (file_row_number % "
                   "300)::INTEGER - 150) END "
                   "AND (file_row_number % 7 = 3) = (signbit(edge)) "
                   "AND count = file_row_number * file_row_number % 97 AND measurement = file_row_number * 1.25 + 0.5) "
                   "FROM read_parquet('" +
                   path + "', file_row_number = true)"});
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0][0], Cell(std::to_string(kRows)));
  EXPECT_EQ(rows[0][1], Cell(std::to_string(kRows)));
  const auto meta =
      duckdb_rows({"SELECT path_in_schema, encodings, total_compressed_size, "
                   "stats_min_value, stats_max_value, total_uncompressed_size FROM parquet_metadata('" +
                   path + "') ORDER BY column_id"});
  ASSERT_EQ(meta.size(), 4u);  // one row group
  for (size_t c : {0, 1, 2}) EXPECT_NE(meta[c][1]->find("PLAIN_DICTIONARY"), std::string::npos) << *meta[c][0];
  EXPECT_LT(std::stoll(*meta[0][2]), 1000) << "60 steps over 60,000 rows";
  EXPECT_EQ(meta[0][3], Cell("0"));
  EXPECT_EQ(meta[0][4], Cell("59"));
  EXPECT_EQ(meta[2][3], Cell("0"));
  EXPECT_EQ(meta[2][4], Cell("96"));
  // The edges' 302 entries need 9 bits an index: written as 16 (whole bytes), 97 counts as 7.
  EXPECT_GT(std::stoll(*meta[1][5]), kRows * 2);
  EXPECT_LT(std::stoll(*meta[2][5]), kRows);
  // The measurements: PLAIN from the first page on.
  EXPECT_EQ(meta[3][1], Cell("PLAIN, RLE"));
  EXPECT_LT(std::stoll(*meta[3][2]), kRows * 8 / 2) << "PLAIN pages of distinct doubles, compressed";
}

// Full pages (1 MiB by default) are compressed on threads of their own while the next one fills:
// they come back complete and in order, in every column.
TEST_F(DuckDbReadBack, PagesCompressedAsideComeBackInOrder) {
  constexpr int64_t kManyRows = 400000;  // 3.2 MB per INT64 column: several full pages
  static_assert(kManyRows * 8 > 3 * kCompressAsideBytes, "full pages are compressed aside");
  const std::string path = write_file(
      {{"i", ColumnType::kInt64}, {"d", ColumnType::kDouble}, {"s", ColumnType::kString}}, {}, [&](FileWriter& w) {
        for (int64_t i = 0; i < kManyRows; ++i) {
          w.add(i * 7919 % 1000003);
          w.add(static_cast<double>(i) / 4);
          w.add(std::string_view("s" + std::to_string(i)));
          w.end_row();
        }
      });
  const auto rows = duckdb_rows(
      {"SELECT count(*), count(*) FILTER (WHERE i = file_row_number * 7919 % 1000003 AND d = file_row_number / 4 "
       "AND s = 's' || file_row_number) FROM read_parquet('" +
       path + "', file_row_number = true)"});
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0][0], Cell(std::to_string(kManyRows)));
  EXPECT_EQ(rows[0][1], Cell(std::to_string(kManyRows)));
}

// Two columns whose values are first seen in the same rows (histogram_buckets' lo and hi) have
// the same dictionary indices page for page: the second takes the first's compressed pages. A
// column of other values beside them takes none, and every value comes back.
TEST_F(DuckDbReadBack, AColumnTakesThePagesOfTheColumnBeforeItWhereTheyAreTheSame) {
  constexpr int64_t kManyRows = 1500000, kRun = 300, kBuckets = 3000;  // 3 MB of 16-bit indices a column
  static_assert(kManyRows * 2 > 3 * kCompressAsideBytes, "full pages are compressed aside");
  size_t shared = 0;
  const std::string path = write_file(
      {{"lo", ColumnType::kDouble}, {"hi", ColumnType::kDouble}, {"n", ColumnType::kInt64}}, {}, [&](FileWriter& w) {
        std::vector<double> lo(kRun), hi(kRun);
        std::vector<int64_t> bucket(kRun), n(kRun);
        for (int64_t row = 0; row < kManyRows; row += kRun) {
          for (int64_t j = 0; j < kRun; ++j) {
            bucket[j] = (row + j) % kBuckets;
            lo[j] = static_cast<double>(bucket[j]) / 2;
            hi[j] = lo[j] + 0.5;
            n[j] = (row + j) * 7 % kBuckets;  // as many distinct values, first seen in other rows
          }
          w.add_values(std::span<const double>(lo), std::span<const int64_t>(bucket));
          w.add_values(std::span<const double>(hi), std::span<const int64_t>(bucket));
          w.add_values(std::span<const int64_t>(n));
          w.end_row();
        }
        shared = w.pages_shared();
      });
  EXPECT_GE(shared, 2u);  // hi's full pages; n's differ from hi's
  const auto rows =
      duckdb_rows({"SELECT count(*), count(*) FILTER (WHERE lo = (file_row_number % 3000) / 2 AND hi = lo + 0.5 "
                   "AND n = file_row_number * 7 % 3000) FROM read_parquet('" +
                   path + "', file_row_number = true)"});
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0][0], Cell(std::to_string(kManyRows)));
  EXPECT_EQ(rows[0][1], Cell(std::to_string(kManyRows)));
}

TEST_F(DuckDbReadBack, EmptyFileHasItsSchema) {
  const std::string path = write_file({{"a", ColumnType::kString}}, {}, [](FileWriter&) {});
  const auto rows = duckdb_rows({"SELECT count(*), typeof(any_value(a)) FROM read_parquet('" + path + "')"});
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0][0], Cell("0"));
}

}  // namespace
}  // namespace trialdb::parquet
