// Where an S3 trial lives and how to reach it: the s3:// URL, the options a caller may set, and
// the configuration resolved from those options plus the standard AWS environment.
//
// Kept apart from the transport so the rules (what overrides what, which URL a key maps to) are
// plain functions that tests can check without a network.
#pragma once
#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "s3/aws_shared_config.h"
#include "schema/status.h"

namespace trialdb {

// What a caller (the CLI) may set. Empty / unset fields fall back to the environment.
struct S3Options {
  std::string endpoint;            // http(s)://host[:port]; else AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL
  std::string region;              // else AWS_REGION, AWS_DEFAULT_REGION, "us-east-1"
  std::optional<bool> path_style;  // else TRIALDB_S3_PATH_STYLE=1/0, else true iff an endpoint is set
  bool unsigned_requests = false;  // public buckets: send no credentials (or TRIALDB_S3_NO_SIGN_REQUEST=1)

  // Tuning. The defaults suit AWS; tests shrink them.
  int max_in_flight = 8;                      // concurrent requests in read_ranges
  int max_attempts = 5;                       // per request, including the first
  std::chrono::milliseconds retry_base{200};  // first backoff; doubles per attempt, with jitter
  std::chrono::milliseconds retry_cap{5000};  // longest single backoff
  std::chrono::milliseconds connect_timeout{10000};
  std::chrono::milliseconds request_timeout{120000};  // whole request, including the body
  // A request that moves no byte either way for this long is abandoned (and retried): a server
  // that stops answering mid-request. Whole seconds (libcurl's low-speed time), at least 1;
  // libcurl averages the speed over its last ~5 seconds, so a stall is seen that much later.
  std::chrono::milliseconds idle_timeout{20000};
  int list_page_size = 1000;  // ListObjectsV2 max-keys
};

// s3://bucket/prefix, split. prefix has no leading or trailing '/' ("" = the whole bucket).
struct S3Location {
  std::string bucket;
  std::string prefix;
};
// Throws Error (kUsage) naming the URL when it is not s3://bucket[/prefix].
S3Location parse_s3_url(const std::string& url);

// Everything a request needs, resolved once.
struct S3Config {
  std::string endpoint;  // scheme://host[:port][/base], no trailing '/'
  std::string region;
  bool path_style = false;
  bool sign = true;
  std::string access_key_id, secret_access_key, session_token;
  std::string credentials_from;  // where they came from, for messages (variables or profile and file)
  S3Options tuning;
};

std::optional<std::string> process_env(const char* name);  // getenv; empty counts as unset

// Applies options over the environment, then the AWS shared files (aws_shared_config.h) for what
// the environment leaves unset: credentials (both keys from one place) and the region. Throws
// Error (kUsage) when credentials are missing or incomplete (unless unsigned requests were asked
// for), AWS_PROFILE names a profile no file has, or the endpoint is not an http(s) URL. Messages
// name the variables, profiles and files involved, never their values.
S3Config resolve_s3_config(const S3Options& options, const EnvLookup& env = process_env,
                           const FileLookup& files = read_text_file);

// The message with the secret key and session token (should a server ever echo one) replaced by
// ***, in whatever encoding they appear: as is, percent-encoded (once or twice, any hex case),
// JSON-escaped, as XML character references, form-encoded. The one redaction of S3 messages:
// every error S3Http and S3Source throw passes through it.
std::string s3_redact(std::string message, const S3Config& config);

// Runs fn; an Error it throws leaves with its message (cause and file) through s3_redact. The
// public entries of S3Http and S3Source run their whole work inside it, so no message built
// anywhere below them (server bodies, headers, XML snippets, libcurl's words) escapes unredacted.
template <class Fn>
auto s3_redacting(const S3Config& config, Fn&& fn) -> decltype(fn()) {
  try {
    return fn();
  } catch (const Error& e) {
    const Status& st = e.status();
    throw Error(Status(st.kind(), s3_redact(st.cause(), config), s3_redact(st.file(), config), st.step()),
                e.sqlite_code());
  }
}

// RFC 3986 percent-encoding as S3's SigV4 canonical form wants it: unreserved characters stay,
// everything else becomes %XX (upper case). keep_slash keeps '/' (object key paths).
std::string s3_uri_encode(std::string_view s, bool keep_slash);

// URL of a bucket (key "") or of an object, path-style or virtual-hosted. The path is already in
// canonical (encoded) form, which is what libcurl signs.
std::string s3_object_url(const S3Config& config, const std::string& bucket, const std::string& key);

}  // namespace trialdb
