// B6 and F20 on S3, against the scripted loopback server: a body that decompresses to far more
// than its length is neither held nor decoded where it should not be (a listing stops at a
// bound; a ranged GET takes the stored bytes as sent), and no error message carries the secret
// key or the session token in any encoding a server may echo them in.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <zlib.h>

#include <cctype>
#include <functional>
#include <string>
#include <vector>

#include "ingest/source/s3_source.h"
#include "scoped_env.h"
#include "stub_http_server.h"
#include "tests/common/source_reads.h"

namespace trialdb {
namespace {

using test::ScopedEnv;
using test::StubHttpServer;
using test::StubReply;
using test::StubRequest;

constexpr const char* kKey = "AKIDEXAMPLE";
constexpr const char* kSecret = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";
// '/', '+' and '=' are what URL encoding changes.
constexpr const char* kToken = "IQoJb3JpZ2luX2VjEJr//SESSION+TOKEN==";
constexpr size_t kBombBytes = 320u << 20;  // decoded size of the gzip body: past any bound
constexpr size_t kChunkBytes = 1u << 20;
constexpr long kMaxGrowthKb = 128 * 1024;  // what handling the bomb may add to peak RSS
constexpr uint64_t kRangeOffset = 10, kRangeLength = 100;

// gzip of kBombBytes zero bytes (about 320 KiB).
std::string gzip_bomb() {
  z_stream z{};
  EXPECT_EQ(deflateInit2(&z, Z_BEST_COMPRESSION, Z_DEFLATED, 15 + 16, 9, Z_DEFAULT_STRATEGY), Z_OK);
  std::vector<unsigned char> zeros(kChunkBytes, 0), out(kChunkBytes);
  std::string gz;
  for (size_t done = 0; done <= kBombBytes; done += kChunkBytes) {
    const bool last = done == kBombBytes;
    z.next_in = zeros.data();
    z.avail_in = last ? 0 : static_cast<uInt>(kChunkBytes);
    do {
      z.next_out = out.data();
      z.avail_out = static_cast<uInt>(out.size());
      deflate(&z, last ? Z_FINISH : Z_NO_FLUSH);
      gz.append(reinterpret_cast<char*>(out.data()), out.size() - z.avail_out);
    } while (z.avail_out == 0);
  }
  deflateEnd(&z);
  return gz;
}

long peak_rss_kb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

class S3HostileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    env_.clear_aws()
        .set("AWS_ACCESS_KEY_ID", kKey)
        .set("AWS_SECRET_ACCESS_KEY", kSecret)
        .set("AWS_SESSION_TOKEN", kToken);
  }
  std::unique_ptr<S3Source> source(const StubHttpServer& server) {
    S3Options o;
    o.endpoint = server.endpoint();
    o.max_attempts = 1;
    return std::make_unique<S3Source>("s3://bkt/pre", o);
  }
  ScopedEnv env_;
};

TEST_F(S3HostileTest, ACompressedListingIsRefusedAtItsBoundNotHeld) {
  const std::string bomb = gzip_bomb();
  StubHttpServer server([&](const StubRequest&) {
    return StubReply{200, bomb, {{"Content-Type", "application/xml"}, {"Content-Encoding", "gzip"}}};
  });
  auto src = source(server);
  const long before = peak_rss_kb();
  const std::string msg = message_of([&] { src->list("index/"); });
  EXPECT_NE(msg.find("S3 LIST s3://bkt/pre/index/: the response body is over"), std::string::npos) << msg;
  EXPECT_LT(peak_rss_kb() - before, kMaxGrowthKb);
}

TEST_F(S3HostileTest, ARangedGetTakesTheStoredBytesAsSent) {
  const std::string bomb = gzip_bomb();
  StubHttpServer server([&](const StubRequest&) {  // ignores Range, compresses anyway
    return StubReply{200, bomb, {{"Content-Encoding", "gzip"}}};
  });
  auto src = source(server);
  const long before = peak_rss_kb();
  std::optional<std::string> got = read_range_bytes(*src, "events/e", kRangeOffset, kRangeLength);
  ASSERT_TRUE(got);
  EXPECT_EQ(*got, bomb.substr(kRangeOffset, kRangeLength));
  EXPECT_LT(peak_rss_kb() - before, kMaxGrowthKb);
  for (const StubRequest& r : server.requests()) EXPECT_EQ(r.headers.count("accept-encoding"), 0u);
}

// Every way a server might echo a secret: as is, percent-encoded (both hex cases, twice),
// JSON-escaped, as XML character references.
std::vector<std::string> encodings(const std::string& secret) {
  std::string upper, lower, twice, json, xml_ref;
  const char* hex_upper = "0123456789ABCDEF";
  const char* hex_lower = "0123456789abcdef";
  for (unsigned char c : secret) {
    const bool plain = std::isalnum(c) != 0;
    const std::string up = std::string("%") + hex_upper[c >> 4] + hex_upper[c & 15];
    upper += plain ? std::string(1, c) : up;
    lower += plain ? std::string(1, c) : std::string("%") + hex_lower[c >> 4] + hex_lower[c & 15];
    twice += plain ? std::string(1, c) : "%25" + up.substr(1);
    json += c == '/' ? std::string("\\/") : std::string(1, c);
    xml_ref += plain ? std::string(1, c) : "&#x" + up.substr(1) + ";";
  }
  return {secret, upper, lower, twice, json, xml_ref};
}

TEST_F(S3HostileTest, NoMessageCarriesASecretInAnyEncoding) {
  std::string echoed;
  for (const char* secret : {kSecret, kToken})
    for (const std::string& e : encodings(secret)) echoed += " [" + e + "]";
  StubHttpServer server([&](const StubRequest& r) {
    if (r.target.find("events/") != std::string::npos)  // a Content-Range that echoes them
      return StubReply{206, "x", {{"Content-Range", "bytes 7-7/9" + echoed}}};
    if (r.target.find("list-type") != std::string::npos)  // a listing whose <Size> echoes them
      return StubReply{
          200, "<ListBucketResult><Contents><Key>k</Key><Size>" + echoed + "</Size></Contents></ListBucketResult>", {}};
    return StubReply{403, "<Error><Code>SignatureDoesNotMatch</Code><Message>" + echoed + "</Message></Error>", {}};
  });
  auto src = source(server);
  for (auto op : std::vector<std::function<void()>>{
           [&] { read_bytes(*src, "index/x.json"); }, [&] { src->list("index/"); },
           [&] { src->exists("training_job_end.ts"); }, [&] { read_range_bytes(*src, "events/e", 0, 10); }}) {
    const std::string msg = message_of(op);
    EXPECT_NE(msg, "(no error)");
    EXPECT_NE(msg.find("***"), std::string::npos) << msg;
    for (const char* secret : {kSecret, kToken})
      for (const std::string& e : encodings(secret)) {
        EXPECT_EQ(msg.find(e), std::string::npos) << e << " in " << msg;
        EXPECT_EQ(msg.find(e.substr(0, e.size() / 2)), std::string::npos) << e << " in " << msg;
      }
  }
}

}  // namespace
}  // namespace trialdb
