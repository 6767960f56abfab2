// A GoogleTest fixture that runs one s3rver for a whole suite, with the fixture trials uploaded to
// bucket "trials" under jobs/<name>/debug-output, and the AWS environment pointing at it.
// Tests skip only when node is missing; a missing s3rver install or a failed start is a failure.
#pragma once
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "s3rver_process.h"
#include "scoped_env.h"

namespace trialdb::test {

inline const std::vector<std::string> kFixtures = {"core_dtypes",  "dist2",         "pt_bad_init",
                                                   "pt_good_init", "pt_reductions", "zoo"};
inline constexpr const char* kTrialsBucket = "trials";

inline std::string fixture_dir(const std::string& name) {
  return std::string(TRIALDB_TEST_DATA_DIR) + "/fixtures/" + name;
}
inline std::string fixture_url(const std::string& name) {
  return std::string("s3://") + kTrialsBucket + "/jobs/" + name + "/debug-output";
}

class S3rverSuite : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    node_ = find_node();
    if (!node_) return;
    const std::string js = std::string(TRIALDB_S3_TEST_DIR) + "/node_modules/s3rver/bin/s3rver.js";
    if (!std::filesystem::exists(js)) {
      setup_error_ = js + " is missing: run `npm install` in tests/ingest/source/s3 (scripts/setup.sh does)";
      return;
    }
    try {
      server_ = std::make_unique<S3rverProcess>(*node_, js);
      S3Uploader up(server_->endpoint());
      if (long s = up.create_bucket(kTrialsBucket); s != 200)
        throw std::runtime_error("creating bucket 'trials' answered " + std::to_string(s));
      for (const std::string& name : kFixtures)
        up.put_tree(fixture_dir(name), kTrialsBucket, "jobs/" + name + "/debug-output");
    } catch (const std::exception& e) {
      setup_error_ = e.what();
      server_.reset();
    }
  }
  static void TearDownTestSuite() { server_.reset(); }

  void SetUp() override {
    if (!node_) GTEST_SKIP() << "node is not installed; the s3rver tests need it";
    ASSERT_TRUE(setup_error_.empty()) << setup_error_;
    env_.clear_aws()
        .set("AWS_ACCESS_KEY_ID", kS3rverKey)
        .set("AWS_SECRET_ACCESS_KEY", kS3rverSecret)
        .set("AWS_ENDPOINT_URL", server_->endpoint());
  }

  static inline std::optional<std::string> node_;
  static inline std::string setup_error_;
  static inline std::unique_ptr<S3rverProcess> server_;
  ScopedEnv env_;
};

}  // namespace trialdb::test
