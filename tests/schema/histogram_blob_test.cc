// The histogram blob (schema/histogram_blob.h): its bytes, round trips of every count width, the
// JSON text, and refusals of truncated and corrupt blobs.
#include "schema/histogram_blob.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace trialdb {
namespace {

using Runs = std::vector<std::pair<int64_t, std::vector<uint64_t>>>;

std::string encode(const Runs& runs) {
  HistogramBlobWriter w;
  for (const auto& [first, counts] : runs) {
    w.begin_run(first);
    for (uint64_t c : counts) w.add_count(c);
  }
  return w.finish();
}

Runs runs_of(const std::string& blob) {
  Runs runs;
  HistogramBlobReader r(blob);
  int64_t first;
  const std::vector<uint64_t>* counts;
  while (r.next(&first, &counts)) runs.emplace_back(first, *counts);
  EXPECT_TRUE(r.error().is_ok()) << r.error().cause();
  return runs;
}

std::string bytes(std::initializer_list<int> b) {
  std::string s;
  for (int x : b) s.push_back(static_cast<char>(x));
  return s;
}

TEST(HistogramBlob, TheFormatsBytes) {
  EXPECT_EQ(encode({}), bytes({kHistogramFormatPacked}));
  // -3 zigzags to 5; [1, 0, 2] fits 2 bits: shape (3 - 1) << 3 | 1, counts 01 00 10 -> 0b100001.
  // The next run starts at 0: 0 - (-3 + 3) = 0; [7] fits 4 bits: shape 2. Then 16001 - 1 = 16000
  // as a varint (0x80 | 0x00, 0x7D) and [300] as a varint (0xAC, 0x02), shape 4.
  EXPECT_EQ(encode({{-3, {1, 0, 2}}, {0, {7}}, {16001, {300}}}),
            bytes({kHistogramFormatPacked, 5, 2 << 3 | 1, 0b100001, 0, 2, 7, 0x80, 0x7D, 4, 0xAC, 0x02}));
}

TEST(HistogramBlob, RunsOfEveryWidthRoundTrip) {
  const Runs runs = {{-262016, {1}},           {-200000, {1, 0, 1, 1, 0, 0, 0, 1, 1}},
                     {-5, {3, 0, 2}},          {0, {15}},
                     {1, {200, 0, 255, 1}},    {9, {256}},
                     {20, {UINT64_MAX, 0, 1}}, {262016, {4}}};
  const std::string blob = encode(runs);
  EXPECT_EQ(runs_of(blob), runs);
  std::vector<std::pair<int64_t, uint64_t>> buckets;
  ASSERT_TRUE(decode_histogram_blob(blob, &buckets).is_ok());
  std::vector<std::pair<int64_t, uint64_t>> want;
  for (const auto& [first, counts] : runs)
    for (size_t i = 0; i < counts.size(); ++i)
      if (counts[i]) want.emplace_back(first + static_cast<int64_t>(i), counts[i]);
  EXPECT_EQ(buckets, want);
}

TEST(HistogramBlob, RandomRunsRoundTrip) {
  std::mt19937_64 rng(7);
  for (int round = 0; round < 200; ++round) {
    Runs runs;
    int64_t next = -static_cast<int64_t>(rng() % 300000);
    const int n = static_cast<int>(rng() % 20);
    for (int i = 0; i < n; ++i) {
      next += static_cast<int64_t>(rng() % 50);
      std::vector<uint64_t> counts(1 + rng() % 140);
      const int bits = static_cast<int>(rng() % 64) + 1;
      for (uint64_t& c : counts) c = rng() >> (64 - bits) >> (rng() % bits);
      runs.emplace_back(next, counts);
      next += static_cast<int64_t>(counts.size());
    }
    if (next > kHistogramBucketLimit) continue;
    EXPECT_EQ(runs_of(encode(runs)), runs) << round;
  }
}

// The ingest keeps one writer per thread from value to value (kernels/distribution.cc): a blob
// written after another, or after runs dropped by clear(), is the one a new writer makes.
TEST(HistogramBlob, AReusedWriterWritesWhatANewOneDoes) {
  std::mt19937_64 rng(9);
  HistogramBlobWriter reused;
  for (int round = 0; round < 50; ++round) {
    Runs runs;
    int64_t next = -static_cast<int64_t>(rng() % 3000);
    const int n = 1 + static_cast<int>(rng() % (round % 2 ? 3 : 60));  // long blobs, then short ones
    for (int i = 0; i < n; ++i) {
      next += static_cast<int64_t>(rng() % 9);
      std::vector<uint64_t> counts(1 + rng() % 40);
      for (uint64_t& c : counts) c = rng() % (round % 3 ? 4 : 1000);
      runs.emplace_back(next, counts);
      next += static_cast<int64_t>(counts.size());
    }
    if (round % 5 == 0) {  // runs given up part-way
      reused.begin_run(-7);
      reused.add_count(3);
      reused.add_run(40, runs.front().second.data(), runs.front().second.size(), 1023);
      reused.clear();
    }
    for (const auto& [first, counts] : runs) {
      uint64_t counts_or = 0;
      for (uint64_t c : counts) counts_or |= c;
      reused.add_run(first, counts.data(), counts.size(), counts_or);
    }
    EXPECT_EQ(reused.finish(), encode(runs)) << round;
  }
}

TEST(HistogramBlob, JsonTextIsTheViewsForm) {
  std::string text;
  ASSERT_TRUE(histogram_blob_json(encode({{-3, {1, 0, 2}}, {0, {7}}, {16001, {4}}}), &text).is_ok());
  EXPECT_EQ(text, R"({"-3":[1,0,2],"0":[7],"16001":[4]})");
  ASSERT_TRUE(histogram_blob_json(encode({}), &text).is_ok());
  EXPECT_EQ(text, "{}");
  EXPECT_FALSE(histogram_blob_json("", &text).is_ok());
}

void expect_refused(const std::string& blob, const std::string& cause) {
  std::vector<std::pair<int64_t, uint64_t>> buckets;
  const Status st = decode_histogram_blob(blob, &buckets);
  EXPECT_EQ(st.kind(), ErrorKind::kInvalidInput) << cause;
  EXPECT_EQ(st.cause(), "histogram blob: " + cause);
}

TEST(HistogramBlob, TruncatedAndCorruptBlobsAreRefusedByName) {
  const uint8_t f = kHistogramFormatPacked;
  expect_refused("", "empty (no format byte)");
  expect_refused(bytes({'{', '}'}), "unknown format byte");
  expect_refused(bytes({f, 0x80}), "truncated varint");
  expect_refused(bytes({f, 2}), "truncated varint");  // a start without a shape
  expect_refused(bytes({f, 2, 5}), "unknown count width");
  expect_refused(bytes({f, 2, 9 << 3 | 0}), "truncated run");     // 10 one-bit counts need 2 bytes
  expect_refused(bytes({f, 2, 1 << 3 | 4, 1}), "truncated run");  // two varint counts, one byte
  expect_refused(bytes({f, 2, 0 << 3 | 4, 0x80}), "truncated varint");
  expect_refused(bytes({f, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x02}), "varint over 64 bits");
  expect_refused(bytes({f, 0x80, 0x80, 0x80, 0x02, 0, 1}), "bucket out of range");     // 2^21, zigzagged
  expect_refused(bytes({f, 0, 0, 1, 0x80, 0x80, 0x40, 0, 1}), "bucket out of range");  // a later run too far
  expect_refused(bytes({f, 0, 0x80, 0x80, 0x80, 0x04, 1}), "run too long");
  // A run reaching past the last bucket.
  HistogramBlobWriter w;
  w.begin_run(kHistogramBucketLimit);
  w.add_count(1);
  w.add_count(1);
  expect_refused(w.finish(), "bucket out of range");
}

// Every count costs at least a bit: a blob decodes to at most 8 buckets a byte.
TEST(HistogramBlob, DecodedBucketsAreBoundedByTheBlobsSize) {
  Runs runs = {{-70000, std::vector<uint64_t>(kHistogramMaxRun, 1)}};
  const std::string blob = encode(runs);
  std::vector<std::pair<int64_t, uint64_t>> buckets;
  ASSERT_TRUE(decode_histogram_blob(blob, &buckets).is_ok());
  EXPECT_EQ(buckets.size(), static_cast<size_t>(kHistogramMaxRun));
  EXPECT_LE(buckets.size(), 8 * blob.size());
}

}  // namespace
}  // namespace trialdb
