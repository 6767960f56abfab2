// The S3 transport: signed HTTP requests over one libcurl multi handle, several in flight at once,
// retried with exponential backoff and jitter when the failure is transient.
//
// Signing is libcurl's own (CURLOPT_AWS_SIGV4 "aws:amz:<region>:s3" with CURLOPT_USERPWD); this
// file only supplies what SigV4 for S3 needs besides: the x-amz-content-sha256 header (libcurl
// 7.x does not add it) and, for temporary credentials, x-amz-security-token. URLs arrive already
// in canonical form (s3_config.h), because older libcurl signs the path and query as sent.
// libcurl itself is opened by the first S3Http (curl_api.h), not linked.
//
// Thread-safe: the ingester prepares several index files at once, each calling the source. Every
// perform() borrows a "lane" (a multi handle with its own warm connections) from a pool, so
// concurrent callers never share curl handles yet connections are reused across calls.
//
// Every request has a connect timeout, an idle timeout (no byte moved either way for a while: a
// server that stopped answering) and a timeout for the whole; a request is tried at most
// max_attempts times (s3_config.h), so no call waits without bound.
//
// Retried: connection failures and timeouts, HTTP 5xx, 429, and S3's throttling / RequestTimeout
// codes. Everything else (403, 404, 416 ...) is returned to the caller, which knows what it means.
#pragma once
#include <curl/curl.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "s3/s3_config.h"

namespace trialdb {

struct S3Request {
  std::string url;   // canonical URL (s3_object_url + optional canonical query)
  std::string what;  // for messages: "GET s3://bucket/key"
  // Inclusive byte range for a ranged GET ("Range: bytes=first-last").
  std::optional<std::pair<uint64_t, uint64_t>> range;
  // Other methods (s3_upload.h): PUT and POST send `body` (not copied: it must outlive perform()),
  // signed with its SHA-256 in hex; DELETE sends none.
  std::string method = "GET";
  std::string_view body{};
  std::string body_sha256{};
};

struct S3Response {
  long status = 0;
  std::string body;
  std::string content_range;  // Content-Range header, "" when absent
  std::string bucket_region;  // x-amz-bucket-region header (wrong-region hints)
  std::string etag;           // ETag header (an uploaded part's, for completing the upload)
  int attempts = 0;           // how many tries it took
};

class S3Http {
 public:
  explicit S3Http(const S3Config& config);
  ~S3Http();
  S3Http(const S3Http&) = delete;
  S3Http& operator=(const S3Http&) = delete;

  // Runs every request, at most config.tuning.max_in_flight at a time, and returns their final
  // responses in the same order. Throws Error (kIo) (naming the request, never a secret) when a
  // request still fails transiently after max_attempts, or fails in a way retrying cannot fix.
  std::vector<S3Response> perform(const std::vector<S3Request>& requests);
  S3Response perform(const S3Request& request);

  // Total HTTP exchanges so far, retries included (tests and stats).
  uint64_t exchanges() const { return exchanges_; }

 private:
  struct Transfer;
  struct Lane {
    CURLM* multi = nullptr;
    std::vector<CURL*> idle;  // reused easy handles (their TLS sessions and DNS entries stay warm)
    std::mt19937_64 rng;
  };
  std::unique_ptr<Lane> acquire_lane();
  void release_lane(std::unique_ptr<Lane> lane);
  std::vector<S3Response> run(Lane& lane, const std::vector<S3Request>& requests);
  void start(Lane& lane, Transfer& t);
  // What to do with a finished transfer: "" = done, otherwise why it should be retried.
  std::string transient_failure(const Transfer& t, CURLcode rc) const;
  std::chrono::milliseconds backoff(Lane& lane, int attempt) const;

  S3Config config_;
  std::string userpwd_;
  std::string ca_bundle_;  // AWS_CA_BUNDLE
  std::mutex lanes_mu_;
  std::vector<std::unique_ptr<Lane>> free_lanes_;
  std::atomic<uint64_t> exchanges_{0};
};

}  // namespace trialdb
