// Signed, concurrent, retrying S3 requests over libcurl multi (see s3_http.h).
#include "s3/s3_http.h"

#include <algorithm>
#include <cctype>
#include <cinttypes>
#include <cstdio>
#include <chrono>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>

#include "s3/curl_api.h"
#include "s3/s3_xml.h"
#include "schema/status.h"

namespace trialdb {

namespace {

using Clock = std::chrono::steady_clock;

// SHA-256 of the empty payload: S3 wants the payload hash spelled out in x-amz-content-sha256
// (libcurl uses the header's value when signing); requests with a body bring their own.
constexpr const char* kEmptyPayloadSha256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

bool is_throttling_code(const std::string& code) {
  return code == "SlowDown" || code == "Throttling" || code == "ThrottlingException" || code == "RequestThrottled" ||
         code == "RequestLimitExceeded" || code == "TooManyRequestsException" || code == "RequestTimeout" ||
         code == "RequestTimeoutException" || code == "InternalError" || code == "ServiceUnavailable";
}

// Transport failures worth another try: the network or the server hiccuped.
bool is_transient_curl_error(CURLcode rc) {
  switch (rc) {
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_CONNECT:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
    case CURLE_WEIRD_SERVER_REPLY: return true;
    default: return false;
  }
}

// The most a response to a request without a range may bring (decoded, when the server
// compressed it): such requests fetch listing pages, index and collections files and error
// bodies, all far smaller. A body beyond it is refused rather than held, whatever
// Content-Encoding made it grow to.
constexpr uint64_t kMaxWholeBodyBytes = 64u << 20;
constexpr long kHttpOk = 200, kHttpPartial = 206;

bool header_is(std::string_view line, std::string_view name) {
  if (line.size() <= name.size() || line[name.size()] != ':') return false;
  for (size_t i = 0; i < name.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(line[i])) != name[i]) return false;
  return true;
}

std::string header_value(std::string_view line, size_t name_len) {
  std::string_view v = line.substr(name_len + 1);
  size_t b = v.find_first_not_of(" \t");
  size_t e = v.find_last_not_of(" \t\r\n");
  if (b == std::string_view::npos || e < b) return "";
  return std::string(v.substr(b, e - b + 1));
}

}  // namespace

struct S3Http::Transfer {
  size_t index = 0;
  const S3Request* request = nullptr;
  CURL* easy = nullptr;
  curl_slist* headers = nullptr;
  S3Response response;
  char errbuf[CURL_ERROR_SIZE] = {};
  Clock::time_point ready_at{};
  std::string last_failure;
  bool range_past_end = false;
  // How much of the body to keep, decided at its first byte: a ranged GET's range (cut out of
  // the whole object when the server ignored Range), anything else (listings, whole files,
  // error bodies) at most kMaxWholeBodyBytes.
  bool body_started = false;
  bool body_is_range = false;  // the body is the requested range's bytes (206, or 200 cut down)
  uint64_t body_skip = 0;      // bytes still to drop before the range begins (200 to a ranged GET)
  uint64_t body_limit = kMaxWholeBodyBytes;
  bool body_full = false;      // body_limit reached: the transfer was stopped there
  bool range_ignored = false;  // 200 to a ranged GET: answered as the 206 it should have been

  void start_body() {
    const CurlApi& curl = curl_api();
    body_started = true;
    long status = 0;
    curl.easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
    if (!request->range || (status != kHttpOk && status != kHttpPartial)) return;
    body_is_range = true;
    body_limit = request->range->second - request->range->first + 1;
    if (status == kHttpOk) {
      range_ignored = true;
      body_skip = request->range->first;
    }
  }

  static size_t on_body(char* data, size_t size, size_t n, void* user) {
    auto* t = static_cast<Transfer*>(user);
    std::string& body = t->response.body;
    const size_t bytes = size * n;
    if (!t->body_started) t->start_body();
    std::string_view in(data, bytes);
    const size_t skipped = static_cast<size_t>(std::min<uint64_t>(t->body_skip, in.size()));
    t->body_skip -= skipped;
    in.remove_prefix(skipped);
    if (in.size() <= t->body_limit - body.size()) {
      body.append(in);
      return bytes;
    }
    // Keep what fits, then stop the transfer (CURLE_WRITE_ERROR, recognised in run()).
    body.append(in.substr(0, static_cast<size_t>(t->body_limit - body.size())));
    t->body_full = true;
    return 0;
  }

  static size_t on_header(char* data, size_t size, size_t n, void* user) {
    auto* t = static_cast<Transfer*>(user);
    std::string_view line(data, size * n);
    if (line.rfind("HTTP/", 0) == 0) {  // a new response (after a 100 Continue): start over
      t->response.content_range.clear();
      t->response.bucket_region.clear();
    } else if (header_is(line, "content-range")) {
      t->response.content_range = header_value(line, 13);
      // "bytes first-last/total" with first >= total: a range past the end that the server
      // (s3rver, for empty objects) answered 206 with a body it never sends. Stop waiting for
      // it and treat it as the 416 it should have been.
      uint64_t first = 0, total = 0;
      const std::string& v = t->response.content_range;
      if (std::sscanf(v.c_str(), "bytes %" SCNu64 "-%*u/%" SCNu64, &first, &total) == 2 && first >= total) {
        t->range_past_end = true;
        return 0;  // aborts the transfer (CURLE_WRITE_ERROR), recognised in run()
      }
    } else if (header_is(line, "x-amz-bucket-region")) {
      t->response.bucket_region = header_value(line, 19);
    } else if (header_is(line, "etag")) {
      t->response.etag = header_value(line, 4);
    }
    return size * n;
  }
};

S3Http::S3Http(const S3Config& config) : config_(config) {
  curl_api();  // loads libcurl: a missing one fails here, before any request
  if (config_.sign) userpwd_ = config_.access_key_id + ":" + config_.secret_access_key;
  ca_bundle_ = process_env("AWS_CA_BUNDLE").value_or("");
}

S3Http::~S3Http() {
  const CurlApi& curl = curl_api();
  for (auto& lane : free_lanes_) {
    for (CURL* e : lane->idle) curl.easy_cleanup(e);
    curl.multi_cleanup(lane->multi);
  }
  // The copy of the secret should not outlive its use.
  std::fill(userpwd_.begin(), userpwd_.end(), '\0');
}

std::unique_ptr<S3Http::Lane> S3Http::acquire_lane() {
  {
    std::lock_guard<std::mutex> lock(lanes_mu_);
    if (!free_lanes_.empty()) {
      std::unique_ptr<Lane> lane = std::move(free_lanes_.back());
      free_lanes_.pop_back();
      return lane;
    }
  }
  const CurlApi& curl = curl_api();
  auto lane = std::make_unique<Lane>();
  lane->multi = curl.multi_init();
  if (lane->multi == nullptr) throw Error(ErrorKind::kIo, "S3: cannot initialise libcurl");
  curl.multi_setopt(lane->multi, CURLMOPT_MAX_HOST_CONNECTIONS, static_cast<long>(config_.tuning.max_in_flight));
  lane->rng.seed(std::random_device{}());
  return lane;
}

void S3Http::release_lane(std::unique_ptr<Lane> lane) {
  std::lock_guard<std::mutex> lock(lanes_mu_);
  free_lanes_.push_back(std::move(lane));
}

std::chrono::milliseconds S3Http::backoff(Lane& lane, int attempt) const {
  // Exponential with "equal jitter": half the step is fixed, half random, so retries from many
  // clients spread out yet still back off.
  int64_t step = config_.tuning.retry_base.count();
  for (int i = 1; i < attempt && step < config_.tuning.retry_cap.count(); ++i) step *= 2;
  step = std::min<int64_t>(step, config_.tuning.retry_cap.count());
  std::uniform_int_distribution<int64_t> jitter(0, std::max<int64_t>(step / 2, 0));
  return std::chrono::milliseconds(step - step / 2 + jitter(lane.rng));
}

void S3Http::start(Lane& lane, Transfer& t) {
  const CurlApi& curl = curl_api();
  if (lane.idle.empty()) {
    t.easy = curl.easy_init();
    if (t.easy == nullptr) throw Error(ErrorKind::kIo, "S3: cannot create a libcurl handle");
  } else {
    t.easy = lane.idle.back();
    lane.idle.pop_back();
    curl.easy_reset(t.easy);
  }
  t.response.body.clear();
  if (t.request->range)  // one allocation for the expected body (spans are bounded by the caller)
    t.response.body.reserve(
        static_cast<size_t>(std::min<uint64_t>(t.request->range->second - t.request->range->first + 1, 8u << 20)));
  t.response.content_range.clear();
  t.response.bucket_region.clear();
  t.response.etag.clear();
  t.response.status = 0;
  t.range_past_end = false;
  t.body_started = t.body_is_range = t.body_full = t.range_ignored = false;
  t.body_skip = 0;
  t.body_limit = kMaxWholeBodyBytes;
  t.errbuf[0] = '\0';
  ++t.response.attempts;
  ++exchanges_;

  curl.slist_free_all(t.headers);
  t.headers = nullptr;
  const std::string& payload_sha256 = t.request->body_sha256.empty() ? kEmptyPayloadSha256 : t.request->body_sha256;
  t.headers = curl.slist_append(t.headers, ("x-amz-content-sha256: " + payload_sha256).c_str());
  const bool sends_body = t.request->method == "PUT" || t.request->method == "POST";
  if (sends_body) t.headers = curl.slist_append(t.headers, "Content-Type: application/octet-stream");
  if (config_.sign && !config_.session_token.empty())
    t.headers = curl.slist_append(t.headers, ("x-amz-security-token: " + config_.session_token).c_str());
  if (t.request->range) {
    t.headers = curl.slist_append(t.headers, ("Range: bytes=" + std::to_string(t.request->range->first) + "-" +
                                              std::to_string(t.request->range->second))
                                                 .c_str());
  }

  CURL* e = t.easy;
  curl.easy_setopt(e, CURLOPT_URL, t.request->url.c_str());
  curl.easy_setopt(e, CURLOPT_PATH_AS_IS, 1L);  // the signed path must be the path sent
  curl.easy_setopt(e, CURLOPT_HTTPGET, 1L);
  if (t.request->method != "GET") curl.easy_setopt(e, CURLOPT_CUSTOMREQUEST, t.request->method.c_str());
  if (sends_body) {
    curl.easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(t.request->body.size()));
    curl.easy_setopt(e, CURLOPT_POSTFIELDS, t.request->body.empty() ? "" : t.request->body.data());
  }
  curl.easy_setopt(e, CURLOPT_HTTPHEADER, t.headers);
  curl.easy_setopt(e, CURLOPT_WRITEFUNCTION, &Transfer::on_body);
  curl.easy_setopt(e, CURLOPT_WRITEDATA, &t);
  curl.easy_setopt(e, CURLOPT_HEADERFUNCTION, &Transfer::on_header);
  curl.easy_setopt(e, CURLOPT_HEADERDATA, &t);
  curl.easy_setopt(e, CURLOPT_ERRORBUFFER, t.errbuf);
  curl.easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
  curl.easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(config_.tuning.connect_timeout.count()));
  curl.easy_setopt(e, CURLOPT_TIMEOUT_MS, static_cast<long>(config_.tuning.request_timeout.count()));
  // Idle: under 1 byte a second (sent or received) for idle_timeout.
  curl.easy_setopt(e, CURLOPT_LOW_SPEED_LIMIT, 1L);
  curl.easy_setopt(e, CURLOPT_LOW_SPEED_TIME,
                   std::max<long>(1, static_cast<long>((config_.tuning.idle_timeout.count() + 999) / 1000)));
  // gzip'd XML listings, if the server offers (decoded within body_limit). A range is of the
  // object's stored bytes, so ranged GETs take them as sent: no decoding.
  if (!t.request->range) curl.easy_setopt(e, CURLOPT_ACCEPT_ENCODING, "");
#if LIBCURL_VERSION_NUM >= 0x075500
  curl.easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
#endif
  if (!ca_bundle_.empty()) curl.easy_setopt(e, CURLOPT_CAINFO, ca_bundle_.c_str());
  if (config_.sign) {
    const std::string sigv4 = "aws:amz:" + config_.region + ":s3";
    curl.easy_setopt(e, CURLOPT_AWS_SIGV4, sigv4.c_str());  // libcurl copies option strings
    curl.easy_setopt(e, CURLOPT_USERPWD, userpwd_.c_str());
  }
  curl.easy_setopt(e, CURLOPT_PRIVATE, &t);
  CURLMcode mc = curl.multi_add_handle(lane.multi, e);
  if (mc != CURLM_OK) throw Error(ErrorKind::kIo, std::string("S3: curl_multi_add_handle: ") + curl.multi_strerror(mc));
}

std::string S3Http::transient_failure(const Transfer& t, CURLcode rc) const {
  if (rc != CURLE_OK) {
    if (!is_transient_curl_error(rc)) return "";
    return std::string(curl_api().easy_strerror(rc)) + (t.errbuf[0] ? std::string(" (") + t.errbuf + ")" : "");
  }
  long status = t.response.status;
  if (status >= 500 || status == 429 || status == 400 || status == 403) {
    S3ErrorBody err = parse_s3_error(t.response.body);
    if (status >= 500 || status == 429 || is_throttling_code(err.code))
      return "HTTP " + std::to_string(status) + (err.code.empty() ? "" : " " + err.code);
  }
  return "";
}

std::vector<S3Response> S3Http::perform(const std::vector<S3Request>& requests) {
  std::unique_ptr<Lane> lane = acquire_lane();
  struct Return {
    S3Http* self;
    std::unique_ptr<Lane>& lane;
    ~Return() { self->release_lane(std::move(lane)); }
  } give_back{this, lane};
  return s3_redacting(config_, [&] { return run(*lane, requests); });
}

std::vector<S3Response> S3Http::run(Lane& lane, const std::vector<S3Request>& requests) {
  const CurlApi& curl = curl_api();
  std::vector<Transfer> transfers(requests.size());
  std::deque<Transfer*> waiting;  // not yet started, or backing off until ready_at
  for (size_t i = 0; i < requests.size(); ++i) {
    transfers[i].index = i;
    transfers[i].request = &requests[i];
    waiting.push_back(&transfers[i]);
  }
  size_t active = 0;
  const size_t max_active = static_cast<size_t>(config_.tuning.max_in_flight);

  // On every exit path (exceptions included) detach running transfers and free their lists.
  struct Cleanup {
    Lane& lane;
    std::vector<Transfer>& transfers;
    ~Cleanup() {
      const CurlApi& curl = curl_api();
      for (Transfer& t : transfers) {
        if (t.easy != nullptr) {
          curl.multi_remove_handle(lane.multi, t.easy);
          lane.idle.push_back(t.easy);
          t.easy = nullptr;
        }
        curl.slist_free_all(t.headers);
        t.headers = nullptr;
      }
    }
  } cleanup{lane, transfers};

  while (!waiting.empty() || active > 0) {
    // Start whatever is due, up to the concurrency bound (FIFO, so retries wait their turn).
    Clock::time_point now = Clock::now();
    for (size_t n = waiting.size(); n > 0 && active < max_active; --n) {
      Transfer* t = waiting.front();
      waiting.pop_front();
      if (t->ready_at > now) {
        waiting.push_back(t);
        continue;
      }
      start(lane, *t);
      ++active;
    }

    int running = 0;
    CURLMcode mc = curl.multi_perform(lane.multi, &running);
    if (mc != CURLM_OK) throw Error(ErrorKind::kIo, std::string("S3: curl_multi_perform: ") + curl.multi_strerror(mc));

    int left = 0;
    while (CURLMsg* msg = curl.multi_info_read(lane.multi, &left)) {
      if (msg->msg != CURLMSG_DONE) continue;
      Transfer* t = nullptr;
      curl.easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, reinterpret_cast<char**>(&t));
      CURLcode rc = msg->data.result;
      curl.easy_getinfo(t->easy, CURLINFO_RESPONSE_CODE, &t->response.status);
      if (t->range_past_end) {
        rc = CURLE_OK;
        t->response.status = 416;
        t->response.body.clear();
      }
      if (t->body_full && !t->body_is_range)
        throw Error(ErrorKind::kIo, "S3 " + t->request->what + ": the response body is over " +
                                        std::to_string(kMaxWholeBodyBytes) +
                                        " bytes (decoded), more than any listing, "
                                        "index or collections file; refused rather than held");
      if (t->body_full && rc == CURLE_WRITE_ERROR) rc = CURLE_OK;  // the range is all there
      if (t->range_ignored && rc == CURLE_OK) t->response.status = kHttpPartial;
      curl.multi_remove_handle(lane.multi, t->easy);
      lane.idle.push_back(t->easy);
      t->easy = nullptr;
      --active;

      std::string why = transient_failure(*t, rc);
      if (!why.empty()) {
        t->last_failure = why;
        if (t->response.attempts >= config_.tuning.max_attempts)
          throw Error(ErrorKind::kIo, "S3 " + t->request->what + ": gave up after " +
                                          std::to_string(t->response.attempts) + " attempts; last failure: " + why);
        t->ready_at = Clock::now() + backoff(lane, t->response.attempts);
        waiting.push_back(t);
      } else if (rc != CURLE_OK) {
        throw Error(ErrorKind::kIo, "S3 " + t->request->what + ": " + curl.easy_strerror(rc) +
                                        (t->errbuf[0] ? std::string(" (") + t->errbuf + ")" : ""));
      }
    }

    if (waiting.empty() && active == 0) break;
    // Sleep until a socket is ready or the next backoff ends (capped, so nothing waits long for
    // a wake-up it missed).
    int64_t wait_ms = 100;
    if (active < max_active && !waiting.empty()) {
      Clock::time_point next = waiting.front()->ready_at;
      for (Transfer* t : waiting) next = std::min(next, t->ready_at);
      wait_ms = std::clamp<int64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(next - Clock::now()).count(),
                                    0, 100);
    }
    if (wait_ms == 0) continue;
    if (active == 0) std::this_thread::sleep_for(std::chrono::milliseconds(wait_ms));
    else curl.multi_poll(lane.multi, nullptr, 0, static_cast<int>(wait_ms), nullptr);
  }

  std::vector<S3Response> out;
  out.reserve(transfers.size());
  for (Transfer& t : transfers) out.push_back(std::move(t.response));
  return out;
}

S3Response S3Http::perform(const S3Request& request) {
  std::vector<S3Response> r = perform(std::vector<S3Request>{request});
  return std::move(r.front());
}

}  // namespace trialdb
