// S3Source and its transport against a scripted loopback HTTP server: what is sent (SigV4 headers,
// canonical URLs, ranges, list queries) and how answers are handled (retries with backoff on
// 5xx/429/throttling/timeouts, 403/404/301 errors without secrets, 416, concurrency, coalescing).
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <map>
#include <regex>
#include <thread>

#include "ingest/source/s3_source.h"
#include "s3/s3_xml.h"
#include "scoped_env.h"
#include "sigv4_check.h"
#include "stub_http_server.h"
#include "tests/common/source_reads.h"

namespace trialdb {
namespace {

using test::percent_decode;
using test::ScopedEnv;
using test::StubHttpServer;
using test::StubReply;
using test::StubRequest;

constexpr const char* kKey = "AKIDEXAMPLE";
constexpr const char* kSecret = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";
constexpr const char* kToken = "IQoJb3JpZ2luX2VjEJr//SESSION+TOKEN==";
constexpr const char* kEmptySha256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

std::string xml_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '&') out += "&amp;";
    else if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else out.push_back(c);
  }
  return out;
}

StubReply s3_error(int status, const std::string& code, const std::string& message = "") {
  return StubReply{status,
                   "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>" + code + "</Code><Message>" +
                       xml_escape(message) + "</Message><RequestId>1</RequestId></Error>",
                   {{"Content-Type", "application/xml"}}};
}

// A minimal path-style S3: one bucket of objects, ListObjectsV2 with max-keys / start-after /
// continuation-token, and GET with Range.
struct FakeS3 {
  std::string bucket = "bkt";
  std::map<std::string, std::string> objects;

  StubReply operator()(const StubRequest& r) const {
    std::string path = r.target.substr(0, r.target.find('?'));
    std::map<std::string, std::string> query;
    if (size_t q = r.target.find('?'); q != std::string::npos) {
      std::string qs = r.target.substr(q + 1);
      for (size_t at = 0; at <= qs.size();) {
        size_t amp = qs.find('&', at);
        std::string kv = qs.substr(at, amp == std::string::npos ? std::string::npos : amp - at);
        size_t eq = kv.find('=');
        query[kv.substr(0, eq)] = eq == std::string::npos ? "" : percent_decode(kv.substr(eq + 1));
        if (amp == std::string::npos) break;
        at = amp + 1;
      }
    }
    const std::string root = "/" + bucket;
    if (path != root && path.rfind(root + "/", 0) != 0)
      return s3_error(404, "NoSuchBucket", "The specified bucket does not exist");
    if (path == root) {
      size_t max_keys = std::stoul(query.count("max-keys") ? query["max-keys"] : "1000");
      std::string after =
          query.count("continuation-token") ? query["continuation-token"].substr(4) : query["start-after"];
      std::string prefix = query["prefix"];
      std::string body = "<ListBucketResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">";
      size_t n = 0;
      std::string last;
      bool truncated = false;
      for (auto it = objects.upper_bound(after); it != objects.end(); ++it) {
        if (it->first.rfind(prefix, 0) != 0) continue;
        if (n == max_keys) {
          truncated = true;
          break;
        }
        body += "<Contents><Key>" + xml_escape(it->first) + "</Key><Size>" + std::to_string(it->second.size()) +
                "</Size></Contents>";
        last = it->first;
        ++n;
      }
      body += std::string("<IsTruncated>") + (truncated ? "true" : "false") + "</IsTruncated>";
      if (truncated) body += "<NextContinuationToken>tok:" + xml_escape(last) + "</NextContinuationToken>";
      return StubReply{200, body + "</ListBucketResult>", {}};
    }
    std::string key = percent_decode(path.substr(root.size() + 1));
    auto it = objects.find(key);
    if (it == objects.end()) return s3_error(404, "NoSuchKey", "The specified key does not exist.");
    const std::string& data = it->second;
    auto range = r.headers.find("range");
    if (range == r.headers.end()) return StubReply{200, data, {}};
    uint64_t first = 0, last = 0;
    std::sscanf(range->second.c_str(), "bytes=%lu-%lu", &first, &last);
    if (first >= data.size()) return s3_error(416, "InvalidRange", "The requested range is not satisfiable");
    last = std::min<uint64_t>(last, data.size() - 1);
    return StubReply{206,
                     data.substr(first, last - first + 1),
                     {{"Content-Range", "bytes " + std::to_string(first) + "-" + std::to_string(last) + "/" +
                                            std::to_string(data.size())}}};
  }
};

std::string pattern(size_t n, unsigned seed) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>((i * 131 + seed * 7 + (i >> 8)) & 0xff);
  return s;
}

class S3StubTest : public ::testing::Test {
 protected:
  void SetUp() override { env_.clear_aws().set("AWS_ACCESS_KEY_ID", kKey).set("AWS_SECRET_ACCESS_KEY", kSecret); }
  // Fast retries so failure paths finish in milliseconds.
  static S3Options fast(int attempts = 4) {
    S3Options o;
    o.max_attempts = attempts;
    o.retry_base = std::chrono::milliseconds(5);
    o.retry_cap = std::chrono::milliseconds(50);
    o.request_timeout = std::chrono::milliseconds(5000);
    return o;
  }
  std::unique_ptr<S3Source> source(const StubHttpServer& server, S3Options o, const std::string& url = "s3://bkt/pre") {
    o.endpoint = server.endpoint();
    return std::make_unique<S3Source>(url, o);
  }
  static std::string message_of(const std::function<void()>& f) {
    try {
      f();
    } catch (const Error& e) {
      return e.what();
    }
    return "(no error)";
  }
  ScopedEnv env_;
};

TEST_F(S3StubTest, SignsWithSigV4ThroughLibcurl) {
  env_.set("AWS_SESSION_TOKEN", kToken).set("AWS_REGION", "eu-west-3");
  FakeS3 s3;
  s3.objects["pre/dir/a b+c.bin"] = "0123456789";
  StubHttpServer server(std::ref(s3));
  auto src = source(server, fast());
  EXPECT_EQ(read_range_bytes(*src, "dir/a b+c.bin", 2, 3), "234");

  auto reqs = server.requests();
  ASSERT_EQ(reqs.size(), 1u);
  const StubRequest& r = reqs[0];
  EXPECT_EQ(r.method, "GET");
  EXPECT_EQ(r.target, "/bkt/pre/dir/a%20b%2Bc.bin");  // canonical, path-style (custom endpoint)
  EXPECT_EQ(r.headers.at("range"), "bytes=2-4");
  EXPECT_EQ(r.headers.at("x-amz-content-sha256"), kEmptySha256);
  EXPECT_EQ(r.headers.at("x-amz-security-token"), kToken);
  EXPECT_TRUE(std::regex_match(r.headers.at("x-amz-date"), std::regex(R"(\d{8}T\d{6}Z)")));
  const std::string& auth = r.headers.at("authorization");
  EXPECT_TRUE(std::regex_match(
      auth, std::regex(R"(AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/\d{8}/eu-west-3/s3/aws4_request, )"
                       R"(SignedHeaders=host;range;x-amz-content-sha256;x-amz-date;x-amz-security-token, )"
                       R"(Signature=[0-9a-f]{64})")))
      << auth;
  for (const auto& [name, value] : r.headers) EXPECT_EQ(value.find(kSecret), std::string::npos) << name;
}

TEST_F(S3StubTest, SignaturesVerifyTheWayS3ChecksThem) {
  // Keys and list parameters full of characters that need encoding: if the URL trialdb sends were
  // not canonical, libcurl would sign one string and S3 (or MinIO) would check another.
  env_.set("AWS_SESSION_TOKEN", kToken).set("AWS_REGION", "eu-west-3");
  FakeS3 s3;
  const std::vector<std::string> keys = {"odd dir/a b+c!'()*@$,;=:~.bin", "odd dir/caf\xC3\xA9 & <x>.json",
                                         "odd dir/plain.json", "odd dir/sub/%41.json"};
  for (const auto& k : keys) s3.objects["pre/" + k] = "0123456789";
  StubHttpServer server(std::ref(s3));
  S3Options o = fast();
  o.list_page_size = 1;  // continuation tokens (which hold '/', ':' and spaces here) on every page
  auto src = source(server, o);
  for (const auto& k : keys) {
    EXPECT_EQ(read_bytes(*src, k), "0123456789") << k;
    EXPECT_EQ(read_range_bytes(*src, k, 3, 4), "3456") << k;
    EXPECT_TRUE(src->exists(k)) << k;
  }
  EXPECT_EQ(src->list("odd dir/").size(), keys.size());
  EXPECT_EQ(src->list("odd dir/", "odd dir/a b+c!'()*@$,;=:~.bin").size(), keys.size() - 1);
  auto reqs = server.requests();
  ASSERT_EQ(reqs.size(), 3 * keys.size() + 4 + 3);  // 3 per key, then 4 + 3 one-key list pages
  for (const StubRequest& r : reqs) {
    EXPECT_EQ(test::check_sigv4(r, kSecret), "") << r.target;
    EXPECT_NE(test::check_sigv4(r, "not-the-secret"), "") << "the check must be able to fail";
  }
}

TEST_F(S3StubTest, SignaturesDifferPerRequestAndSecret) {
  FakeS3 s3;
  s3.objects["pre/a"] = "x";
  StubHttpServer server(std::ref(s3));
  read_bytes(*source(server, fast()), "a");
  env_.set("AWS_SECRET_ACCESS_KEY", "another-secret");
  read_bytes(*source(server, fast()), "a");
  auto reqs = server.requests();
  ASSERT_EQ(reqs.size(), 2u);
  // Same request, same second (almost surely), different secret: a real HMAC, not a constant.
  auto sig = [](const StubRequest& r) {
    return r.headers.at("authorization").substr(r.headers.at("authorization").rfind('=') + 1);
  };
  if (reqs[0].headers.at("x-amz-date") == reqs[1].headers.at("x-amz-date")) {
    EXPECT_NE(sig(reqs[0]), sig(reqs[1]));
  }
}

TEST_F(S3StubTest, UnsignedRequestsCarryNoCredentials) {
  env_.clear_aws().set("TRIALDB_S3_NO_SIGN_REQUEST", "1");
  FakeS3 s3;
  s3.objects["pre/a"] = "public";
  StubHttpServer server(std::ref(s3));
  EXPECT_EQ(read_bytes(*source(server, fast()), "a"), "public");
  auto reqs = server.requests();
  ASSERT_EQ(reqs.size(), 1u);
  EXPECT_EQ(reqs[0].headers.count("authorization"), 0u);
}

TEST_F(S3StubTest, ListPaginatesWithCanonicalQueries) {
  FakeS3 s3;
  std::vector<std::string> names = {"index/000000000000/000000000000_worker_0.json",
                                    "index/000000000000/000000000000_worker_1.json",
                                    "index/000000000001/000000000001_worker_0.json",
                                    "events/000000000000/000000000000_worker_0.tfevents",
                                    "training_job_end.ts",
                                    "odd/a & b <c>.json",
                                    "odd/sp ace/é+%.json",
                                    "odd/folder/"};  // a console's folder placeholder
  for (size_t i = 0; i < names.size(); ++i) s3.objects["pre/" + names[i]] = std::string(i, 'x');
  s3.objects["pre-other/index/x.json"] = "not ours";
  s3.objects["pref/index/x.json"] = "not ours";
  StubHttpServer server(std::ref(s3));
  S3Options o = fast();
  o.list_page_size = 2;
  auto src = source(server, o);

  std::vector<SourceFile> all = src->list("");
  std::vector<std::string> got;
  for (const auto& f : all) got.push_back(f.path);
  std::vector<std::string> want = {"events/000000000000/000000000000_worker_0.tfevents",
                                   "index/000000000000/000000000000_worker_0.json",
                                   "index/000000000000/000000000000_worker_1.json",
                                   "index/000000000001/000000000001_worker_0.json",
                                   "odd/a & b <c>.json",
                                   "odd/sp ace/é+%.json",
                                   "training_job_end.ts"};
  EXPECT_EQ(got, want);
  EXPECT_EQ(all[0].size, 3u);  // sizes come from <Size>

  auto reqs = server.requests();
  ASSERT_EQ(reqs.size(), 4u);  // 8 objects, 2 per page
  EXPECT_EQ(reqs[0].target, "/bkt?list-type=2&max-keys=2&prefix=pre%2F");
  for (size_t i = 1; i < reqs.size(); ++i)
    EXPECT_EQ(reqs[i].target.rfind("/bkt?continuation-token=tok%3Apre%2F", 0), 0u) << reqs[i].target;

  // start-after: only what follows; a repeated poll lists nothing new.
  std::vector<SourceFile> idx = src->list("index/", "index/000000000000/000000000000_worker_0.json");
  ASSERT_EQ(idx.size(), 2u);
  EXPECT_EQ(idx[0].path, "index/000000000000/000000000000_worker_1.json");
  EXPECT_EQ(server.requests().back().target,
            "/bkt?list-type=2&max-keys=2&prefix=pre%2Findex%2F&start-after=pre%2Findex%2F000000000000%2F000000000000_"
            "worker_0.json");
  EXPECT_TRUE(src->list("index/", idx.back().path).empty());
}

TEST_F(S3StubTest, RetriesTransientFailuresThenSucceeds) {
  std::atomic<int> calls{0};
  StubHttpServer server([&](const StubRequest&) {
    switch (calls++) {
      case 0: return s3_error(503, "SlowDown", "Please reduce your request rate.");
      case 1: return s3_error(500, "InternalError");
      case 2: return StubReply{429, "", {}};
      case 3: return s3_error(400, "RequestTimeout", "Your socket connection to the server was not read from");
      default: return StubReply{200, "finally", {}};
    }
  });
  auto src = source(server, fast(5));
  EXPECT_EQ(read_bytes(*src, "k"), "finally");
  EXPECT_EQ(calls.load(), 5);
  EXPECT_EQ(src->requests_made(), 5u);
}

TEST_F(S3StubTest, GivesUpAfterMaxAttemptsWithBackoff) {
  StubHttpServer server(
      [](const StubRequest&) { return s3_error(503, "SlowDown", "Please reduce your request rate."); });
  S3Options o = fast(3);
  o.retry_base = std::chrono::milliseconds(40);
  o.retry_cap = std::chrono::milliseconds(1000);
  auto src = source(server, o);
  auto t0 = std::chrono::steady_clock::now();
  std::string msg = message_of([&] { read_bytes(*src, "index/k.json"); });
  auto elapsed = std::chrono::steady_clock::now() - t0;
  EXPECT_NE(msg.find("gave up after 3 attempts"), std::string::npos) << msg;
  EXPECT_NE(msg.find("SlowDown"), std::string::npos) << msg;
  EXPECT_NE(msg.find("s3://bkt/pre/index/k.json"), std::string::npos) << msg;
  EXPECT_EQ(server.requests().size(), 3u);
  // Backoffs of at least 20 ms then 40 ms (half of each doubling step is fixed, half jitter).
  EXPECT_GE(elapsed, std::chrono::milliseconds(60));
}

TEST_F(S3StubTest, TimeoutsAreRetried) {
  std::atomic<int> calls{0};
  StubHttpServer server([&](const StubRequest&) {
    StubReply r{200, "late but fine", {}};
    if (calls++ == 0) r.hang = true;  // the first answer never comes
    return r;
  });
  S3Options o = fast(3);
  o.request_timeout = std::chrono::milliseconds(300);
  auto src = source(server, o);
  auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(read_bytes(*src, "k"), "late but fine");
  EXPECT_GE(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(300));
  EXPECT_EQ(calls.load(), 2);
}

TEST_F(S3StubTest, ConnectionFailuresAreRetriedThenReported) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);  // nothing listens on this port now
  S3Options o = fast(2);
  o.endpoint = "http://127.0.0.1:" + std::to_string(ntohs(addr.sin_port));
  S3Source src("s3://bkt/pre", o);
  std::string msg = message_of([&] { src.list("index/"); });
  EXPECT_NE(msg.find("gave up after 2 attempts"), std::string::npos) << msg;
  EXPECT_NE(msg.find("connect"), std::string::npos) << msg;
  EXPECT_EQ(msg.find(kSecret), std::string::npos) << msg;
}

TEST_F(S3StubTest, RejectedCredentialsAreAClearErrorWithoutSecrets) {
  env_.set("AWS_SESSION_TOKEN", kToken);
  StubHttpServer server([](const StubRequest&) {
    // A hostile or buggy server echoing the secret must not get it printed either.
    return s3_error(
        403, "SignatureDoesNotMatch",
        std::string("The request signature we calculated does not match; key ") + kSecret + " token " + kToken);
  });
  auto src = source(server, fast());
  for (auto op : std::vector<std::function<void()>>{
           [&] { read_bytes(*src, "index/x.json"); }, [&] { src->list("index/"); },
           [&] { src->exists("training_job_end.ts"); }, [&] { read_range_bytes(*src, "events/e", 0, 10); }}) {
    std::string msg = message_of(op);
    EXPECT_NE(msg.find("HTTP 403 SignatureDoesNotMatch"), std::string::npos) << msg;
    EXPECT_NE(msg.find("s3://bkt/pre/"), std::string::npos) << msg;
    EXPECT_NE(msg.find("check AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN"), std::string::npos)
        << msg;
    EXPECT_EQ(msg.find(kSecret), std::string::npos) << msg;
    EXPECT_EQ(msg.find(kToken), std::string::npos) << msg;
  }
  EXPECT_EQ(server.requests().size(), 4u);  // a 403 is final: no retries
}

TEST_F(S3StubTest, MissingKeyIsNulloptMissingBucketIsAnError) {
  FakeS3 s3;
  s3.objects["pre/present"] = "";
  StubHttpServer server(std::ref(s3));
  auto src = source(server, fast());
  EXPECT_EQ(read_bytes(*src, "absent"), std::nullopt);
  EXPECT_EQ(read_range_bytes(*src, "absent", 0, 10), std::nullopt);
  EXPECT_FALSE(src->exists("absent"));
  EXPECT_TRUE(src->exists("present"));  // empty object: 416 to a one-byte range still means "exists"
  EXPECT_EQ(read_bytes(*src, "present"), "");

  auto wrong = source(server, fast(), "s3://no-such-bucket/pre");
  for (auto op : std::vector<std::function<void()>>{[&] { read_bytes(*wrong, "absent"); }, [&] { wrong->list(""); },
                                                    [&] { wrong->exists("x"); }}) {
    std::string msg = message_of(op);
    EXPECT_NE(msg.find("HTTP 404 NoSuchBucket"), std::string::npos) << msg;
    EXPECT_NE(msg.find("bucket 'no-such-bucket' does not exist at " + server.endpoint()), std::string::npos) << msg;
  }
}

TEST_F(S3StubTest, WrongRegionNamesTheBucketsRegion) {
  StubHttpServer server([](const StubRequest&) {
    StubReply r = s3_error(301, "PermanentRedirect",
                           "The bucket you are attempting to access must be addressed using the specified endpoint.");
    r.headers.push_back({"x-amz-bucket-region", "eu-central-1"});
    return r;
  });
  std::string msg = message_of([&] { source(server, fast())->list(""); });
  EXPECT_NE(msg.find("is not in region us-east-1; it is in eu-central-1 (set AWS_REGION=eu-central-1)"),
            std::string::npos)
      << msg;
}

TEST_F(S3StubTest, RangesPastTheEndAndServersThatIgnoreRange) {
  FakeS3 s3;
  s3.objects["pre/f"] = "abcdef";
  StubHttpServer server(std::ref(s3));
  auto src = source(server, fast());
  EXPECT_EQ(read_range_bytes(*src, "f", 4, 100), "ef");  // shorter than asked: what exists
  EXPECT_EQ(read_range_bytes(*src, "f", 6, 10), "");     // starts at the end: 416
  EXPECT_EQ(read_range_bytes(*src, "f", 600, 10), "");
  EXPECT_EQ(read_range_bytes(*src, "f", 1, 0), "");
  EXPECT_EQ(read_range_bytes(*src, "nope", 1, 0), std::nullopt);

  StubHttpServer plain([](const StubRequest&) { return StubReply{200, "abcdef", {}}; });
  auto p = source(plain, fast());
  EXPECT_EQ(read_range_bytes(*p, "f", 2, 3), "cde");
  EXPECT_EQ(read_range_bytes(*p, "f", 5, 3), "f");
  EXPECT_EQ(read_range_bytes(*p, "f", 9, 3), "");

  StubHttpServer liar([](const StubRequest&) { return StubReply{206, "xyz", {{"Content-Range", "bytes 0-2/6"}}}; });
  std::string msg = message_of([&] { read_range_bytes(*source(liar, fast()), "f", 3, 3); });
  EXPECT_NE(msg.find("asked for bytes from 3"), std::string::npos) << msg;
}

TEST_F(S3StubTest, ABogus206PastTheEndCountsAsEmptyWithoutWaiting) {
  // s3rver answers a range on an empty object with 206, "bytes 0-0/0" and a Content-Length of 1
  // it never sends; waiting for that byte would stall until the server drops the connection.
  StubHttpServer server([](const StubRequest&) {
    StubReply r{206, "", {{"Content-Range", "bytes 0-0/0"}}};
    r.content_length = 1;
    return r;
  });
  auto src = source(server, fast());
  auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(read_range_bytes(*src, "training_job_end.ts", 0, 100), "");
  EXPECT_TRUE(src->exists("training_job_end.ts"));
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(1));
  EXPECT_EQ(server.requests().size(), 2u);  // and nothing was retried
}

TEST_F(S3StubTest, ReadRangesKeepsSeveralRequestsInFlight) {
  FakeS3 s3;
  for (int i = 0; i < 12; ++i) s3.objects["pre/events/" + std::to_string(i)] = pattern(1000, i);
  StubHttpServer server([&](const StubRequest& r) {
    StubReply reply = s3(r);
    reply.delay_ms = 300;
    return reply;
  });
  S3Options o = fast();
  o.max_in_flight = 4;
  auto src = source(server, o);
  std::vector<TrialSource::Range> ranges;
  for (int i = 0; i < 12; ++i) ranges.push_back({"events/" + std::to_string(i), static_cast<uint64_t>(10 * i), 100});
  auto t0 = std::chrono::steady_clock::now();
  auto got = read_ranges_bytes(*src, ranges);
  auto elapsed = std::chrono::steady_clock::now() - t0;
  ASSERT_EQ(got.size(), 12u);
  for (int i = 0; i < 12; ++i) EXPECT_EQ(got[i], pattern(1000, i).substr(10 * i, 100)) << i;
  EXPECT_EQ(server.max_concurrent(), 4);                        // bounded, and actually concurrent
  EXPECT_LT(elapsed, std::chrono::milliseconds(12 * 300 / 2));  // ~3 rounds of 300 ms, not 12
}

TEST_F(S3StubTest, ReadRangesCoalescesNeighboursOfOneObject) {
  FakeS3 s3;
  const std::string big = pattern(1 << 20, 3), small = pattern(100, 4);
  s3.objects["pre/e/big"] = big;
  s3.objects["pre/e/small"] = small;
  StubHttpServer server(std::ref(s3));
  auto src = source(server, fast());
  std::vector<TrialSource::Range> ranges = {
      {"e/big", 100, 50},      {"e/small", 90, 20},  // short: past the end
      {"e/big", 0, 10},        {"e/big", 10, 10},   {"e/big", 5000, 0},
      {"e/big", 900000, 4096}, {"e/missing", 0, 5}, {"e/big", (1 << 20) - 10, 100},
  };
  auto got = read_ranges_bytes(*src, ranges);
  EXPECT_EQ(got[0], big.substr(100, 50));
  EXPECT_EQ(got[1], small.substr(90, 10));
  EXPECT_EQ(got[2], big.substr(0, 10));
  EXPECT_EQ(got[3], big.substr(10, 10));
  EXPECT_EQ(got[4], "");
  EXPECT_EQ(got[5], big.substr(900000, 4096));
  EXPECT_EQ(got[6], std::nullopt);
  EXPECT_EQ(got[7], big.substr((1 << 20) - 10));
  // big: [0, 5000) in one GET, [900000, end) in another (more than 256 KiB apart); small; missing.
  EXPECT_EQ(server.requests().size(), 4u);
}

TEST_F(S3StubTest, SafeToCallFromSeveralThreads) {
  FakeS3 s3;
  for (int i = 0; i < 32; ++i) s3.objects["pre/f" + std::to_string(i)] = pattern(5000, i);
  StubHttpServer server(std::ref(s3));
  auto src = source(server, fast());
  std::atomic<int> good{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      for (int i = t; i < 32; i += 8) {
        if (read_bytes(*src, "f" + std::to_string(i)) == pattern(5000, i)) ++good;
        if (read_range_bytes(*src, "f" + std::to_string(i), 100, 10) == pattern(5000, i).substr(100, 10)) ++good;
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(good.load(), 64);
}

}  // namespace
}  // namespace trialdb
