// trialdb export to S3 against s3rver (tests/ingest/source/s3): the objects are byte for byte the
// files of the same export to a folder (which export_test.cc reads back with DuckDB), a file
// larger than one part arrives whole through a multipart upload, and a re-export with nothing
// new uploads nothing. Signatures are checked against the stub server in s3_upload_test.cc
// (s3rver does not verify them).
#include <gtest/gtest.h>

#include <filesystem>

#include "common/file_bytes.h"
#include "common/run_process.h"
#include "common/temp_dir.h"
#include "s3/s3_upload.h"
#include "s3rver_suite.h"

namespace trialdb {
namespace {

namespace fs = std::filesystem;
constexpr const char* kExportBucket = "exports";

int trialdb_cli(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {TRIALDB_BIN};
  argv.insert(argv.end(), args.begin(), args.end());
  return test::run_process(argv);
}

class S3Export : public test::S3rverSuite {};

TEST_F(S3Export, ObjectsEqualTheLocalExportAndGrowOnlyWithNewSteps) {
  test::TempDir dir("trialdb_s3_export");
  const std::string db = dir / "t.db", local = dir / "local", big = dir / "big";
  ASSERT_EQ(test::S3Uploader(server_->endpoint()).create_bucket(kExportBucket), 200);
  for (const char* name : {"pt_bad_init", "dist2"})
    ASSERT_EQ(trialdb_cli({"ingest", test::fixture_dir(name), "--db", db}), 0);
  // A trial whose raw values make a tensor_values file of several 8 MiB parts.
  ASSERT_EQ(trialdb_cli({"synth", big, "--steps", "2", "--tensors", "2", "--elements", "1500000"}), 0);
  ASSERT_EQ(trialdb_cli({"ingest", big, "--db", db}), 0);
  const std::string url = std::string("s3://") + kExportBucket + "/team/x";
  ASSERT_EQ(trialdb_cli({"export", "--db", db, "--out", local, "--values", "inline"}), 0);
  ASSERT_EQ(trialdb_cli({"export", "--db", db, "--out", url, "--values", "inline"}), 0);

  const S3Config cfg = resolve_s3_config(S3Options{});
  S3Http http(cfg);
  size_t files = 0;
  uintmax_t largest = 0;
  for (const auto& e : fs::recursive_directory_iterator(local)) {
    if (!e.is_regular_file()) continue;
    const std::string rel = fs::relative(e.path(), local).string();
    const std::optional<std::string> object = s3_get_object(http, cfg, kExportBucket, "team/x/" + rel);
    ASSERT_TRUE(object.has_value()) << rel;
    EXPECT_TRUE(*object == test::file_bytes(e.path())) << rel << " differs from the local export";
    largest = std::max(largest, e.file_size());
    ++files;
  }
  EXPECT_GT(files, 30u);
  EXPECT_GT(largest, 2 * kS3DefaultPartBytes) << "one file must take a multipart upload";

  // Nothing new: the manifests stay as they were, no part-1 appears.
  const auto manifest = s3_get_object(http, cfg, kExportBucket, "team/x/_manifests/trial=big.json");
  ASSERT_EQ(trialdb_cli({"export", "--db", db, "--out", url, "--values", "inline"}), 0);
  EXPECT_EQ(s3_get_object(http, cfg, kExportBucket, "team/x/_manifests/trial=big.json"), manifest);
  EXPECT_EQ(s3_get_object(http, cfg, kExportBucket, "team/x/reductions/trial=big/part-1.parquet"), std::nullopt);
}

TEST_F(S3Export, AMissingBucketIsAnErrorNamingIt) {
  test::TempDir dir("trialdb_s3_export");
  const std::string db = dir / "t.db";
  ASSERT_EQ(trialdb_cli({"ingest", test::fixture_dir("dist2"), "--db", db}), 0);
  const std::string err = dir / "err";
  EXPECT_EQ(test::run_process({TRIALDB_BIN, "export", "--db", db, "--out", "s3://no-such-bucket/p"}, "", err), 1);
  const std::string message = test::file_bytes(err);
  EXPECT_NE(message.find("s3://no-such-bucket/p/"), std::string::npos) << message;
  EXPECT_EQ(message.find(test::kS3rverSecret + std::string("@")), std::string::npos) << message;
}

}  // namespace
}  // namespace trialdb
