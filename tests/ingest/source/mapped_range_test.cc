// MappedRange and LocalSource::map_range: the bytes of any range (page-aligned or not), clamped
// to the file's end, writable without ever writing the file, and nothing for what cannot be
// mapped (the ingester then reads). A file truncated while mapped reads as zeros and says so,
// and a SIGBUS elsewhere still ends the process.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "ingest/source/local_source.h"
#include "ingest/source/mapped_range.h"
#include "tests/common/file_bytes.h"
#include "tests/common/temp_dir.h"
#include "tests/common/source_reads.h"

using namespace trialdb;

// A program installs the SIGBUS handler before anything is mapped (the CLI's main does); so do
// these tests, before any test runs.
static const bool kSigbusHandlerInstalled = (MappedRange::install_sigbus_handler(), true);
using trialdb::test::file_bytes;
using trialdb::test::TempDir;

namespace {

std::string pattern(size_t n) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>((i * 131 + i / 4096) & 0xff);
  return s;
}

}  // namespace

TEST(MappedRange, GivesTheRangesBytesClampedToTheFile) {
  TempDir tmp;
  const std::string content = pattern(3 * 4096 + 123);
  std::ofstream(tmp / "f.bin", std::ios::binary) << content;
  LocalSource src(tmp.path.string());
  struct Case {
    uint64_t offset, length;
  } cases[] = {{0, content.size()}, {4096, 4096}, {5000, 7000}, {1, 1}, {4095, 10}, {8000, 1u << 30}};
  for (auto c : cases) {
    auto r = mapped_range(src, "f.bin", c.offset, c.length);
    ASSERT_NE(r, nullptr) << c.offset;
    const size_t want = std::min<uint64_t>(c.length, content.size() - c.offset);
    ASSERT_EQ(r->size(), want) << c.offset;
    EXPECT_EQ(std::string(r->data(), r->size()), content.substr(c.offset, want)) << c.offset;
  }
}

TEST(MappedRange, WritesStayInMemoryAndTheFileIsUnchanged) {
  TempDir tmp;
  const std::string content = pattern(64 * 1024);
  std::ofstream(tmp / "f.bin", std::ios::binary) << content;
  LocalSource src(tmp.path.string());
  {
    auto r = mapped_range(src, "f.bin", 1000, 20000);
    ASSERT_NE(r, nullptr);
    std::memset(r->data(), 'x', r->size());
    EXPECT_EQ(std::string(r->data(), r->size()), std::string(20000, 'x'));
    auto again = mapped_range(src, "f.bin", 1000, 20000);  // another mapping sees the file
    ASSERT_NE(again, nullptr);
    EXPECT_EQ(std::string(again->data(), again->size()), content.substr(1000, 20000));
  }
  EXPECT_EQ(file_bytes(tmp / "f.bin"), content);
}

// Nothing for a missing file or an empty range (the caller reads it, or waits); a folder is never
// read as a file: an error naming it (local_source.h).
TEST(MappedRange, NothingForMissingFilesAndEmptyRangesAnErrorForDirectories) {
  TempDir tmp;
  std::ofstream(tmp / "f.bin", std::ios::binary) << pattern(100);
  std::filesystem::create_directory(tmp.path / "d");
  LocalSource src(tmp.path.string());
  EXPECT_EQ(mapped_range(src, "missing.bin", 0, 10), nullptr);
  EXPECT_EQ(mapped_range(src, "f.bin", 100, 10), nullptr);  // at the end: a live file not written yet
  EXPECT_EQ(mapped_range(src, "f.bin", 5000, 10), nullptr);
  try {
    (void)mapped_range(src, "d", 0, 10);
    ADD_FAILURE() << "a folder was mapped";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidInput);
    EXPECT_NE(std::string(e.what()).find("not a regular file (a folder)"), std::string::npos) << e.what();
  }
}

TEST(MappedRange, ATruncatedFileReadsAsZerosAndSaysItShrank) {
  TempDir tmp;
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  const std::string content = pattern(16 * page + 100);
  std::ofstream(tmp / "f.bin", std::ios::binary) << content;
  std::ofstream(tmp / "g.bin", std::ios::binary) << content;
  LocalSource src(tmp.path.string());
  auto r = mapped_range(src, "f.bin", 100, content.size() - 100);
  auto untouched = mapped_range(src, "g.bin", 0, content.size());
  ASSERT_NE(r, nullptr);
  ASSERT_NE(untouched, nullptr);
  EXPECT_FALSE(r->shrank());
  const size_t kept = 5 * page + 17;  // the new end, inside a page
  std::filesystem::resize_file(tmp / "f.bin", kept);
  EXPECT_TRUE(r->shrank());  // by its size, before any read
  // Every page read and written: those past the new end fault (SIGBUS) and become zeros.
  std::string seen(r->data(), r->size());
  std::memset(r->data() + r->size() - 10, 'x', 10);
  EXPECT_EQ(seen.substr(0, kept - 100), content.substr(100, kept - 100));
  EXPECT_EQ(seen.substr(6 * page - 100), std::string(r->size() - (6 * page - 100), '\0'));
  EXPECT_TRUE(r->shrank());
  EXPECT_FALSE(untouched->shrank());
  EXPECT_EQ(std::string(untouched->data(), untouched->size()), content);
}

TEST(MappedRange, ATruncatedFileThatGrowsBackStillSaysItShrank) {
  // The fault left zeros in the mapping, whatever the file's size is now.
  TempDir tmp;
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  const std::string content = pattern(8 * page);
  std::ofstream(tmp / "f.bin", std::ios::binary) << content;
  LocalSource src(tmp.path.string());
  auto r = mapped_range(src, "f.bin", 0, content.size());
  ASSERT_NE(r, nullptr);
  std::filesystem::resize_file(tmp / "f.bin", page);
  volatile char c = r->data()[7 * page];
  (void)c;
  std::filesystem::resize_file(tmp / "f.bin", content.size());
  EXPECT_TRUE(r->shrank());
}

TEST(MappedRangeDeathTest, ASigbusOutsideAnyMappingStillEndsTheProcess) {
  TempDir tmp;
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  std::ofstream(tmp / "f.bin", std::ios::binary) << pattern(4 * page);
  std::ofstream(tmp / "g.bin", std::ios::binary) << pattern(4 * page);
  LocalSource src(tmp.path.string());
  auto ours = mapped_range(src, "g.bin", 0, 4 * page);  // the handler is installed
  ASSERT_NE(ours, nullptr);
  const std::string path = tmp / "f.bin";
  EXPECT_EXIT(
      {
        FILE* f = std::fopen(path.c_str(), "r");
        void* p = ::mmap(nullptr, 4 * page, PROT_READ, MAP_PRIVATE, fileno(f), 0);
        std::filesystem::resize_file(path, 0);
        volatile char c = static_cast<char*>(p)[2 * page];
        (void)c;
        std::exit(0);
      },
      testing::KilledBySignal(SIGBUS), "");
}
