// Uploads (s3/s3_upload.h) against a scripted loopback server: a small object is one
// signed PUT; a large one a multipart upload whose every request S3 would accept (SigV4 checked
// with the body's SHA-256), parts in order, completed with their ETags; a transient failure is
// retried; an upload abandoned before completion is aborted; errors name the object, never the
// secret. (Against a real S3 server: tests/export/s3_export_test.cc.)
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <mutex>

#include "s3/s3_upload.h"
#include "scoped_env.h"
#include "sigv4_check.h"
#include "stub_http_server.h"

namespace trialdb {
namespace {

using test::StubHttpServer;
using test::StubReply;
using test::StubRequest;

constexpr const char* kKey = "AKIDEXAMPLE";
constexpr const char* kSecret = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";
constexpr size_t kPart = 1000;  // the stub does not hold parts to S3's 5 MiB minimum

// Path-style S3 for one bucket that takes PutObject and the multipart calls, and serves GET.
struct UploadS3 {
  std::mutex mu;
  std::map<std::string, std::string> objects;
  std::map<int, std::string> parts;
  int fail_first_part_puts = 0;
  // Hostile answers: CompleteMultipartUpload's (status and body), a part's ETag header, a hang.
  int complete_status = 200;
  std::string complete_body = "<CompleteMultipartUploadResult></CompleteMultipartUploadResult>";
  bool part_without_etag = false, part_with_empty_etag = false;
  bool hang_parts = false;

  StubReply operator()(const StubRequest& r) {
    std::lock_guard<std::mutex> lock(mu);
    const std::string path = r.target.substr(0, r.target.find('?'));
    const std::string query = r.target.find('?') == std::string::npos ? "" : r.target.substr(r.target.find('?') + 1);
    const std::string key = test::percent_decode(path.substr(std::string("/bkt/").size()));
    if (r.method == "POST" && query == "uploads=")
      return {200, "<InitiateMultipartUploadResult><UploadId>up/1+x</UploadId></InitiateMultipartUploadResult>", {}};
    if (r.method == "PUT" && query.rfind("partNumber=", 0) == 0) {
      if (fail_first_part_puts > 0 && --fail_first_part_puts >= 0)
        return {503, "<Error><Code>SlowDown</Code></Error>", {}};
      const int n = std::stoi(query.substr(11));
      if (hang_parts) return StubReply{200, "", {}, 0, true};
      parts[n] = r.body;
      if (part_without_etag) return {200, "", {}};
      if (part_with_empty_etag) return {200, "", {{"ETag", "\"\""}}};
      return {200, "", {{"ETag", "\"etag-" + std::to_string(n) + "\""}}};
    }
    if (r.method == "POST" && query.rfind("uploadId=", 0) == 0) {
      std::string whole;
      for (const auto& [n, bytes] : parts) whole += bytes;
      if (complete_status == 200 && complete_body.find("CompleteMultipartUploadResult") != std::string::npos)
        objects[key] = whole;
      return {complete_status, complete_body, {}};
    }
    if (r.method == "DELETE") return {204, "", {}};
    if (r.method == "PUT") {
      objects[key] = r.body;
      return {200, "", {{"ETag", "\"whole\""}}};
    }
    auto it = objects.find(key);
    if (it == objects.end()) return {404, "<Error><Code>NoSuchKey</Code></Error>", {}};
    return {200, it->second, {}};
  }
};

std::string pattern(size_t n) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>((i * 131 + (i >> 8)) & 0xff);
  return s;
}

class S3UploadTest : public ::testing::Test {
 protected:
  void SetUp() override { env_.clear_aws().set("AWS_ACCESS_KEY_ID", kKey).set("AWS_SECRET_ACCESS_KEY", kSecret); }
  S3Config config(const StubHttpServer& server) {
    S3Options o;
    o.endpoint = server.endpoint();
    o.retry_base = std::chrono::milliseconds(5);
    o.retry_cap = std::chrono::milliseconds(20);
    return resolve_s3_config(o);
  }
  static void expect_signed(const StubHttpServer& server) {
    for (const StubRequest& r : server.requests())
      EXPECT_EQ(test::check_sigv4(r, kSecret), "") << r.method << " " << r.target;
  }
  test::ScopedEnv env_;
};

TEST_F(S3UploadTest, ASmallObjectIsOneSignedPut) {
  UploadS3 s3;
  StubHttpServer server(std::ref(s3));
  const S3Config cfg = config(server);
  S3Http http(cfg);
  S3ObjectUpload up(http, cfg, "bkt", "x/a b.parquet", kPart);
  up.write("hello ");
  up.write("world");
  up.complete();
  const auto reqs = server.requests();
  ASSERT_EQ(reqs.size(), 1u);
  EXPECT_EQ(reqs[0].method, "PUT");
  EXPECT_EQ(reqs[0].target, "/bkt/x/a%20b.parquet");
  EXPECT_EQ(s3.objects["x/a b.parquet"], "hello world");
  expect_signed(server);
  EXPECT_EQ(s3_get_object(http, cfg, "bkt", "x/a b.parquet"), std::optional<std::string>("hello world"));
  EXPECT_EQ(s3_get_object(http, cfg, "bkt", "missing"), std::nullopt);
}

TEST_F(S3UploadTest, ALargeObjectIsAMultipartUploadOfOrderedParts) {
  UploadS3 s3;
  s3.fail_first_part_puts = 1;  // the first part's first try answers 503 SlowDown: retried
  StubHttpServer server(std::ref(s3));
  const S3Config cfg = config(server);
  S3Http http(cfg);
  const std::string data = pattern(2 * kPart + 500);
  {
    S3ObjectUpload up(http, cfg, "bkt", "big", kPart);
    for (size_t at = 0; at < data.size(); at += 333) up.write(std::string_view(data).substr(at, 333));
    up.complete();
  }
  EXPECT_EQ(s3.objects["big"], data);
  ASSERT_EQ(s3.parts.size(), 3u);
  EXPECT_EQ(s3.parts[3].size(), 500u);
  const auto reqs = server.requests();
  ASSERT_GE(reqs.size(), 6u);  // create, 3 parts (one retried), complete
  EXPECT_EQ(reqs.front().target, "/bkt/big?uploads=");
  EXPECT_EQ(reqs[1].target, "/bkt/big?partNumber=1&uploadId=up%2F1%2Bx");
  const StubRequest& complete = reqs.back();
  EXPECT_EQ(complete.method, "POST");
  EXPECT_NE(complete.body.find("<Part><PartNumber>3</PartNumber><ETag>\"etag-3\"</ETag></Part>"), std::string::npos)
      << complete.body;
  for (const StubRequest& r : reqs) EXPECT_NE(r.method, "DELETE") << "a completed upload is not aborted";
  expect_signed(server);
}

TEST_F(S3UploadTest, AnUploadAbandonedBeforeCompletionIsAborted) {
  UploadS3 s3;
  StubHttpServer server(std::ref(s3));
  const S3Config cfg = config(server);
  S3Http http(cfg);
  {
    S3ObjectUpload up(http, cfg, "bkt", "half", kPart);
    up.write(pattern(kPart + 10));
  }
  EXPECT_EQ(s3.objects.count("half"), 0u);
  const auto reqs = server.requests();
  ASSERT_FALSE(reqs.empty());
  EXPECT_EQ(reqs.back().method, "DELETE");
  EXPECT_EQ(reqs.back().target, "/bkt/half?uploadId=up%2F1%2Bx");
  expect_signed(server);
}

// What a multipart upload of `n` bytes to key "m" throws ("" when it completes).
std::string upload_error(S3Http& http, const S3Config& cfg, size_t n) {
  try {
    S3ObjectUpload up(http, cfg, "bkt", "m", kPart);
    up.write(pattern(n));
    up.complete();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST_F(S3UploadTest, CompleteMultipartUploadAnswered200WithAnErrorIsAnError) {
  // Real S3 sends 200 at once, whitespace while it works, then the outcome: here an error.
  for (const std::string& body :
       {std::string("\n  \n<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>InternalError</Code>"
                    "<Message>We encountered an internal error. Please try again.</Message></Error>"),
        std::string(""), std::string("   "), std::string("<Unexpected/>")}) {
    UploadS3 s3;
    s3.complete_body = body;
    StubHttpServer server(std::ref(s3));
    const S3Config cfg = config(server);
    S3Http http(cfg);
    const std::string what = upload_error(http, cfg, 2 * kPart + 1);
    EXPECT_NE(what.find("CompleteMultipartUpload"), std::string::npos) << "body " << body << ": " << what;
    EXPECT_NE(what.find("s3://bkt/m"), std::string::npos) << what;
    EXPECT_EQ(s3.objects.count("m"), 0u);
  }
}

TEST_F(S3UploadTest, APartAnsweredWithoutAnETagIsAnError) {
  for (const bool empty : {false, true}) {
    UploadS3 s3;
    (empty ? s3.part_with_empty_etag : s3.part_without_etag) = true;
    StubHttpServer server(std::ref(s3));
    const S3Config cfg = config(server);
    S3Http http(cfg);
    const std::string what = upload_error(http, cfg, 2 * kPart + 1);
    EXPECT_NE(what.find("no ETag"), std::string::npos) << what;
    for (const StubRequest& r : server.requests())
      EXPECT_FALSE(r.method == "POST" && r.target.find("uploadId=") != std::string::npos) << "completed without ETags";
  }
}

TEST_F(S3UploadTest, AServerThatStopsAnsweringIsLeftAfterTheIdleTimeout) {
  UploadS3 s3;
  s3.hang_parts = true;
  StubHttpServer server(std::ref(s3));
  S3Options o;
  o.endpoint = server.endpoint();
  o.retry_base = std::chrono::milliseconds(5);
  o.retry_cap = std::chrono::milliseconds(20);
  o.max_attempts = 2;
  o.request_timeout = std::chrono::milliseconds(120000);  // the idle timeout must end it, not this
  o.idle_timeout = std::chrono::milliseconds(1000);
  const S3Config cfg = resolve_s3_config(o);
  S3Http http(cfg);
  const auto t0 = std::chrono::steady_clock::now();
  const std::string what = upload_error(http, cfg, 2 * kPart + 1);
  const auto elapsed = std::chrono::steady_clock::now() - t0;
  EXPECT_NE(what.find("gave up after 2 attempts"), std::string::npos) << what;
  EXPECT_NE(what.find("UploadPart"), std::string::npos) << what;
  EXPECT_LT(elapsed, std::chrono::seconds(20));
}

TEST_F(S3UploadTest, RefusedUploadsNameTheObjectNeverTheSecret) {
  StubHttpServer server([](const StubRequest&) {
    return StubReply{
        403, std::string("<Error><Code>AccessDenied</Code><Message>denied for ") + kSecret + "</Message></Error>", {}};
  });
  const S3Config cfg = config(server);
  S3Http http(cfg);
  S3ObjectUpload up(http, cfg, "bkt", "t/x.parquet", kPart);
  up.write("abc");
  try {
    up.complete();
    FAIL() << "a refused PUT must throw";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("s3://bkt/t/x.parquet"), std::string::npos) << what;
    EXPECT_NE(what.find("AccessDenied"), std::string::npos) << what;
    EXPECT_EQ(what.find(kSecret), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace trialdb
