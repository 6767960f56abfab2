// ReadBuffer, the bytes a TrialSource read answers (allocated without zero-filling, filled by the
// read), and LocalSource's reads into it: the range's bytes, clamped to the file, nothing for a
// file that does not exist.
#include "ingest/source/read_buffer.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <utility>

#include "ingest/source/local_source.h"
#include "tests/common/source_reads.h"
#include "tests/common/temp_dir.h"

using namespace trialdb;
using trialdb::test::TempDir;

namespace {

std::string pattern(size_t n) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>((i * 131 + i / 251) & 0xff);
  return s;
}

}  // namespace

TEST(ReadBuffer, HoldsWhatIsWrittenIntoItsSize) {
  const std::string bytes = pattern(1000);
  ReadBuffer b(bytes.size());
  ASSERT_EQ(b.size(), bytes.size());
  std::copy(bytes.begin(), bytes.end(), b.data());
  EXPECT_EQ(b.view(), bytes);
  EXPECT_EQ(std::string_view(b), bytes);
  EXPECT_TRUE(ReadBuffer().empty());
  EXPECT_TRUE(ReadBuffer(0).empty());
}

TEST(ReadBuffer, CopyOfHoldsItsOwnCopy) {
  std::string bytes = pattern(300);
  const ReadBuffer b = ReadBuffer::copy_of(bytes);
  const std::string before = bytes;
  bytes.assign(bytes.size(), 'x');
  EXPECT_EQ(b.view(), before);
  EXPECT_TRUE(ReadBuffer::copy_of("").empty());
}

TEST(ReadBuffer, TruncateKeepsTheBytesFilled) {
  const std::string bytes = pattern(64);
  ReadBuffer b = ReadBuffer::copy_of(bytes);
  b.truncate(100);  // never grows
  EXPECT_EQ(b.view(), bytes);
  b.truncate(10);
  EXPECT_EQ(b.view(), bytes.substr(0, 10));
  b.truncate(0);
  EXPECT_TRUE(b.empty());
}

TEST(ReadBuffer, MovesLeaveTheSourceEmpty) {
  const std::string bytes = pattern(50);
  ReadBuffer a = ReadBuffer::copy_of(bytes);
  ReadBuffer b(std::move(a));
  EXPECT_EQ(b.view(), bytes);
  EXPECT_TRUE(a.empty());  // NOLINT(bugprone-use-after-move): what a move leaves is the point
  ReadBuffer c;
  c = std::move(b);
  EXPECT_EQ(c.view(), bytes);
  EXPECT_TRUE(b.empty());  // NOLINT(bugprone-use-after-move)
}

TEST(LocalSourceRead, AnswersTheRangesBytesClampedToTheFile) {
  TempDir tmp;
  const std::string bytes = pattern(10000);
  std::ofstream(tmp / "f", std::ios::binary) << bytes;
  LocalSource src(tmp.path.string());
  EXPECT_EQ(read_bytes(src, "f"), bytes);
  EXPECT_EQ(read_range_bytes(src, "f", 0, 10000), bytes);
  EXPECT_EQ(read_range_bytes(src, "f", 123, 4567), bytes.substr(123, 4567));
  EXPECT_EQ(read_range_bytes(src, "f", 9990, 100), bytes.substr(9990));  // shorter than asked
  EXPECT_EQ(read_range_bytes(src, "f", 10000, 10), "");
  EXPECT_EQ(read_range_bytes(src, "f", 20000, 10), "");
  EXPECT_EQ(read_range_bytes(src, "f", 5, 0), "");
  EXPECT_EQ(read_range_bytes(src, "absent", 0, 10), std::nullopt);
  const auto both = read_ranges_bytes(src, {{"f", 1, 3}, {"absent", 0, 1}, {"f", 9999, 5}});
  ASSERT_EQ(both.size(), 3u);
  EXPECT_EQ(both[0], bytes.substr(1, 3));
  EXPECT_EQ(both[1], std::nullopt);
  EXPECT_EQ(both[2], bytes.substr(9999));
}
