// S3Source against a real S3-speaking server (s3rver) holding the fixture trials: every listing,
// whole read, ranged read and concurrent read must equal the local files byte for byte; missing
// keys, a missing bucket and bad or missing credentials behave as documented.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "ingest/source/s3_source.h"
#include "s3rver_suite.h"
#include "tests/common/source_reads.h"

namespace fs = std::filesystem;

namespace trialdb {
namespace {

using test::fixture_dir;
using test::fixture_url;
using test::kFixtures;

class S3rverSource : public test::S3rverSuite {};

std::vector<SourceFile> local_listing(const std::string& dir, const std::string& prefix = "") {
  std::vector<SourceFile> out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (!e.is_regular_file()) continue;
    std::string rel = fs::relative(e.path(), dir).generic_string();
    if (rel.compare(0, prefix.size(), prefix) == 0) out.push_back({rel, e.file_size()});
  }
  std::sort(out.begin(), out.end(), [](const SourceFile& a, const SourceFile& b) { return a.path < b.path; });
  return out;
}

std::string local_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

std::string slice(const std::string& s, uint64_t off, uint64_t len) {
  return off >= s.size() ? std::string() : s.substr(off, std::min<uint64_t>(len, s.size() - off));
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

void expect_same(const std::vector<SourceFile>& got, const std::vector<SourceFile>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].path, want[i].path) << what;
    EXPECT_EQ(got[i].size, want[i].size) << what << " " << got[i].path;
  }
}

TEST_F(S3rverSource, ListingsEqualTheLocalFolders) {
  S3Options o;
  o.list_page_size = 7;  // force many pages
  for (const std::string& name : kFixtures) {
    S3Source src(fixture_url(name), o);
    EXPECT_EQ(src.root(), fixture_url(name));
    std::vector<SourceFile> want = local_listing(fixture_dir(name));
    ASSERT_FALSE(want.empty());
    uint64_t before = src.requests_made();
    expect_same(src.list(""), want, name);
    // One request per page (a server may or may not send one more, empty, page when the count is
    // a multiple of the page size).
    uint64_t pages = src.requests_made() - before;
    EXPECT_GE(pages, (want.size() + 6) / 7) << name;
    EXPECT_LE(pages, want.size() / 7 + 1) << name;
    for (const char* dir : {"index/", "events/", "collections/"})
      expect_same(src.list(dir), local_listing(fixture_dir(name), dir), name + " " + dir);
    EXPECT_TRUE(src.list("no-such-dir/").empty());
  }
}

TEST_F(S3rverSource, StartAfterListsOnlyLaterKeys) {
  S3Options o;
  o.list_page_size = 5;
  S3Source src(fixture_url("pt_bad_init"), o);
  std::vector<SourceFile> all = local_listing(fixture_dir("pt_bad_init"), "index/");
  ASSERT_GT(all.size(), 10u);
  for (size_t i = 0; i < all.size(); i += 3) {
    std::vector<SourceFile> want(all.begin() + i + 1, all.end());
    expect_same(src.list("index/", all[i].path), want, "after " + all[i].path);
    // A start point that is not itself a key (between two keys).
    std::vector<SourceFile> from_i(all.begin() + i, all.end());
    std::string before_i = all[i].path.substr(0, all[i].path.size() - 1);
    expect_same(src.list("index/", before_i), from_i, "after " + before_i);
  }
  EXPECT_TRUE(src.list("index/", all.back().path).empty());  // a poll with nothing new
}

TEST_F(S3rverSource, ALimitedListingStopsAtItsLimit) {
  S3Options o;
  o.list_page_size = 5;
  S3Source src(fixture_url("pt_bad_init"), o);
  const std::vector<SourceFile> all = local_listing(fixture_dir("pt_bad_init"), "index/");
  ASSERT_GT(all.size(), 12u);
  for (size_t limit : {size_t{1}, size_t{3}, size_t{5}, size_t{12}}) {
    const uint64_t before = src.requests_made();
    expect_same(src.list("index/", "", limit), std::vector<SourceFile>(all.begin(), all.begin() + limit),
                "limit " + std::to_string(limit));
    EXPECT_EQ(src.requests_made() - before, (limit + 4) / 5) << "limit " << limit;  // the pages it needs
  }
  expect_same(src.list("index/", all[2].path, 2), std::vector<SourceFile>(all.begin() + 3, all.begin() + 5), "after");
  EXPECT_TRUE(src.list("index/", "", 0).empty());
  EXPECT_TRUE(src.list("no-such-dir/", "", 1).empty());
}

TEST_F(S3rverSource, WholeReadsEqualLocalFiles) {
  for (const std::string& name : kFixtures) {
    S3Source src(fixture_url(name));
    for (const SourceFile& f : local_listing(fixture_dir(name))) {
      std::optional<std::string> got = read_bytes(src, f.path);
      ASSERT_TRUE(got.has_value()) << name << "/" << f.path;
      EXPECT_EQ(*got, local_bytes(fixture_dir(name) + "/" + f.path)) << name << "/" << f.path;
    }
    EXPECT_EQ(read_bytes(src, "training_job_end.ts"), "");  // empty, but exists
    EXPECT_TRUE(src.exists("training_job_end.ts"));
    EXPECT_EQ(read_range_bytes(src, "training_job_end.ts", 0, 100), "");  // a range on an empty object
  }
}

TEST_F(S3rverSource, RangedReadsEqualLocalSlices) {
  S3Source src(fixture_url("pt_bad_init"));
  for (const SourceFile& f : local_listing(fixture_dir("pt_bad_init"), "events/")) {
    const std::string bytes = local_bytes(fixture_dir("pt_bad_init") + "/" + f.path);
    const uint64_t n = bytes.size();
    for (auto [off, len] : std::vector<std::pair<uint64_t, uint64_t>>{
             {0, 1}, {0, 12}, {n / 3, n / 3}, {n - 5, 5}, {n - 5, 500}, {n, 10}, {n + 100, 10}, {7, 0}, {0, n}}) {
      EXPECT_EQ(read_range_bytes(src, f.path, off, len), slice(bytes, off, len)) << f.path << " @" << off << "+" << len;
    }
  }
}

TEST_F(S3rverSource, ConcurrentReadRangesEqualLocalSlices) {
  S3Options o;
  o.max_in_flight = 8;
  for (const char* name : {"pt_good_init", "dist2"}) {
    S3Source src(fixture_url(name), o);
    std::vector<SourceFile> files = local_listing(fixture_dir(name), "events/");
    std::map<std::string, std::string> bytes;
    for (const auto& f : files) bytes[f.path] = local_bytes(fixture_dir(name) + "/" + f.path);
    std::mt19937 rng(42);
    std::vector<TrialSource::Range> ranges;
    for (int i = 0; i < 300; ++i) {
      const SourceFile& f = files[rng() % files.size()];
      uint64_t off = rng() % (f.size + 64), len = rng() % 70000;
      ranges.push_back({f.path, off, len});
    }
    ranges.push_back({"events/missing.tfevents", 0, 10});
    uint64_t before = src.requests_made();
    std::vector<std::optional<std::string>> got = read_ranges_bytes(src, ranges);
    ASSERT_EQ(got.size(), ranges.size());
    for (size_t i = 0; i + 1 < ranges.size(); ++i) {
      ASSERT_TRUE(got[i].has_value()) << ranges[i].path;
      EXPECT_EQ(*got[i], slice(bytes[ranges[i].path], ranges[i].offset, ranges[i].length))
          << name << " " << ranges[i].path << " @" << ranges[i].offset << "+" << ranges[i].length;
    }
    EXPECT_EQ(got.back(), std::nullopt);
    // Neighbouring ranges of one file were merged: far fewer requests than ranges.
    EXPECT_LT(src.requests_made() - before, ranges.size() / 2) << name;
  }
}

TEST_F(S3rverSource, MissingKeysAreNotErrors) {
  S3Source src(fixture_url("zoo"));
  EXPECT_EQ(read_bytes(src, "index/999999999999/999999999999_worker_0.json"), std::nullopt);
  EXPECT_EQ(read_range_bytes(src, "events/nope.tfevents", 0, 100), std::nullopt);
  EXPECT_FALSE(src.exists("nope"));
  S3Source nowhere("s3://trials/jobs/not-started-yet");  // a job whose output does not exist yet
  EXPECT_TRUE(nowhere.list("index/").empty());
  EXPECT_FALSE(nowhere.exists("training_job_end.ts"));
}

TEST_F(S3rverSource, MissingBucketIsAClearError) {
  S3Source src("s3://no-such-bucket/jobs/x");
  std::string msg = error_of([&] { src.list("index/"); });
  EXPECT_NE(msg.find("s3://no-such-bucket/jobs/x/index/"), std::string::npos) << msg;
  EXPECT_NE(msg.find("HTTP 404 NoSuchBucket"), std::string::npos) << msg;
  EXPECT_NE(msg.find("bucket 'no-such-bucket' does not exist"), std::string::npos) << msg;
  msg = error_of([&] { read_bytes(src, "training_job_end.ts"); });
  EXPECT_NE(msg.find("NoSuchBucket"), std::string::npos) << msg;  // not "missing key, keep waiting"
  msg = error_of([&] { src.exists("training_job_end.ts"); });
  EXPECT_NE(msg.find("NoSuchBucket"), std::string::npos) << msg;
}

TEST_F(S3rverSource, WrongCredentialsAreAClearErrorWithoutTheSecret) {
  const std::string secret = "Wr0ngS3cretValue/that+must+not+leak";
  const std::string token = "AQoDYXdzEPT//////////wEXAMPLEtoken";
  env_.set("AWS_ACCESS_KEY_ID", "AKIAWRONGKEY").set("AWS_SECRET_ACCESS_KEY", secret).set("AWS_SESSION_TOKEN", token);
  S3Source src(fixture_url("zoo"));
  for (auto op :
       std::vector<std::function<void()>>{[&] { src.list("index/"); }, [&] { read_bytes(src, "training_job_end.ts"); },
                                          [&] { read_range_bytes(src, "events/x", 0, 10); }}) {
    std::string msg = error_of(op);
    EXPECT_NE(msg.find("HTTP 403 InvalidAccessKeyId"), std::string::npos) << msg;
    EXPECT_NE(msg.find("s3://trials/jobs/zoo/debug-output/"), std::string::npos) << msg;
    EXPECT_NE(msg.find("check AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"), std::string::npos) << msg;
    EXPECT_EQ(msg.find(secret), std::string::npos) << msg;
    EXPECT_EQ(msg.find(token), std::string::npos) << msg;
  }
}

TEST_F(S3rverSource, MissingCredentialsAreAClearError) {
  env_.set("AWS_ACCESS_KEY_ID", std::nullopt).set("AWS_SECRET_ACCESS_KEY", std::nullopt);
  std::string msg = error_of([] { S3Source src(fixture_url("zoo")); });
  EXPECT_NE(msg.find("no AWS credentials"), std::string::npos) << msg;
  EXPECT_NE(msg.find("AWS_ACCESS_KEY_ID"), std::string::npos) << msg;
  EXPECT_NE(msg.find("AWS_SECRET_ACCESS_KEY"), std::string::npos) << msg;
}

TEST_F(S3rverSource, KeysWithCharactersThatNeedEscaping) {
  test::S3Uploader up(server_->endpoint());
  ASSERT_EQ(up.create_bucket("odd-keys"), 200);
  const std::vector<std::string> keys = {"t/a & b.json",       "t/<tag>.json",    "t/sp ace/x+y=z.json",
                                         "t/caf\xC3\xA9.json", "t/quote\"'.json", "t/pct%20.json"};
  for (size_t i = 0; i < keys.size(); ++i)
    ASSERT_EQ(up.put("odd-keys", keys[i], "body" + std::to_string(i)), 200) << keys[i];
  S3Source src("s3://odd-keys/t");
  std::vector<SourceFile> listed = src.list("");
  std::vector<std::string> want;
  for (const auto& k : keys) want.push_back(k.substr(2));
  std::sort(want.begin(), want.end());
  ASSERT_EQ(listed.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(listed[i].path, want[i]);
  for (size_t i = 0; i < keys.size(); ++i)
    EXPECT_EQ(read_bytes(src, keys[i].substr(2)), "body" + std::to_string(i)) << keys[i];
}

TEST_F(S3rverSource, TemporaryCredentialsAreAccepted) {
  env_.set("AWS_SESSION_TOKEN", "FwoGZXIvYXdzEXAMPLE//token");
  S3Source src(fixture_url("dist2"));
  EXPECT_FALSE(src.list("index/").empty());
}

}  // namespace
}  // namespace trialdb
