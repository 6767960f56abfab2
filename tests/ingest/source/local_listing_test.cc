// LocalSource's listings: every regular file under a prefix, and with a limit, the first ones of
// the same walk and no more (which is how the ingest asks whether index/ and events/ hold
// anything without walking a trial of 100,000 files twice).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "ingest/source/local_source.h"
#include "tests/common/temp_dir.h"

using namespace trialdb;
using trialdb::test::TempDir;

namespace {

std::vector<std::string> paths(const std::vector<SourceFile>& files) {
  std::vector<std::string> out;
  for (const auto& f : files) out.push_back(f.path);
  return out;
}

// index/000000000000/ ... index/000000000003/, three files each.
void make_folders(const std::string& root) {
  for (int step = 0; step < 4; ++step) {
    const std::string dir = root + "/index/00000000000" + std::to_string(step);
    std::filesystem::create_directories(dir);
    for (int worker = 0; worker < 3; ++worker) std::ofstream(dir + "/w" + std::to_string(worker) + ".json") << "{}";
  }
}

}  // namespace

TEST(LocalListing, ALimitGivesTheFirstEntriesOfTheWholeListing) {
  TempDir tmp;
  make_folders(tmp.path.string());
  LocalSource src(tmp.path.string());
  const std::vector<std::string> all = paths(src.list("index/"));
  ASSERT_EQ(all.size(), 12u);
  for (size_t limit : {size_t{1}, size_t{2}, size_t{3}, size_t{4}, size_t{11}, size_t{12}, size_t{50}}) {
    const std::vector<std::string> got = paths(src.list("index/", "", limit));
    EXPECT_EQ(got, std::vector<std::string>(all.begin(), all.begin() + std::min(limit, all.size()))) << limit;
  }
  EXPECT_EQ(paths(src.list("index/", all[4], 2)), std::vector<std::string>(all.begin() + 5, all.begin() + 7));
  EXPECT_TRUE(src.list("index/", "", 0).empty());
  EXPECT_TRUE(src.list("events/", "", 1).empty());
}
