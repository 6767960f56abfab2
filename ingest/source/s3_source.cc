// TrialSource over S3 (see s3_source.h).
#include "ingest/source/s3_source.h"

#include <algorithm>
#include <charconv>
#include <limits>
#include <numeric>

#include "s3/s3_xml.h"

namespace trialdb {

namespace {

// read_ranges merges ranges of one object that are at most this far apart into one GET: a
// round trip costs more than reading a few hundred KiB, but spans stay bounded so large reads
// still spread over several connections.
constexpr uint64_t kCoalesceGap = 256 * 1024;
constexpr uint64_t kMaxSpan = 8 * 1024 * 1024;

bool is_credentials_error(long status, const std::string& code) {
  return status == 403 || code == "InvalidAccessKeyId" || code == "SignatureDoesNotMatch" || code == "AccessDenied" ||
         code == "ExpiredToken" || code == "InvalidToken" || code == "TokenRefreshRequired" ||
         code == "InvalidSecurity";
}

bool is_region_error(long status, const std::string& code) {
  return status == 301 || code == "PermanentRedirect" || code == "AuthorizationHeaderMalformed" ||
         code == "IllegalLocationConstraintException";
}

// First byte position of "bytes first-last/total".
std::optional<uint64_t> content_range_first(const std::string& header) {
  static constexpr std::string_view kUnit = "bytes ";
  if (header.compare(0, kUnit.size(), kUnit) != 0) return std::nullopt;
  uint64_t first = 0;
  const char* begin = header.data() + kUnit.size();
  auto [end, ec] = std::from_chars(begin, header.data() + header.size(), first);
  if (ec != std::errc() || end == begin || *end != '-') return std::nullopt;
  return first;
}

// Runs a read on the S3 client, whose failures are thrown Errors, as a Status with the
// credentials redacted (s3_redacting); a failed read leaves *out empty.
template <class Out, class Fn>
Status read_status(const S3Config& config, Out* out, Fn&& fn) {
  try {
    s3_redacting(config, fn);
    return Status();
  } catch (const Error& e) {
    *out = Out();
    return e.status();
  }
}

}  // namespace

S3Source::S3Source(const std::string& url, const S3Options& options)
    : location_(parse_s3_url(url)), config_(resolve_s3_config(options)), http_(config_) {}

std::string S3Source::root() const {
  return "s3://" + location_.bucket + (location_.prefix.empty() ? "" : "/" + location_.prefix);
}

std::string S3Source::key_of(const std::string& path) const {
  return location_.prefix.empty() ? path : location_.prefix + "/" + path;
}

void S3Source::fail(const S3Response& r, const std::string& op, const std::string& key) const {
  S3ErrorBody err = parse_s3_error(r.body);
  std::string msg = "S3 " + op + " " + s3_name(key) + ": HTTP " + std::to_string(r.status);
  if (!err.code.empty()) msg += " " + err.code;
  if (!err.message.empty()) msg += " (" + err.message + ")";
  if (err.code == "NoSuchBucket" || (r.status == 404 && op == "LIST" && err.code.empty())) {
    msg += ": bucket '" + location_.bucket + "' does not exist at " + config_.endpoint;
  } else if (is_region_error(r.status, err.code)) {
    msg += ": bucket '" + location_.bucket + "' is not in region " + config_.region;
    if (!r.bucket_region.empty()) msg += "; it is in " + r.bucket_region + " (set AWS_REGION=" + r.bucket_region + ")";
    else msg += " (set AWS_REGION to the bucket's region)";
  } else if (is_credentials_error(r.status, err.code)) {
    if (!config_.sign)
      msg += ": the bucket does not allow unsigned requests; set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY";
    else
      msg += ": access refused; check " + config_.credentials_from + ", and that they may read bucket '" +
             location_.bucket + "'";
  }
  throw Error(ErrorKind::kIo, msg);
}

void S3Source::check_object_response(const S3Response& r, const std::string& op, const std::string& key) const {
  if (r.status == 404) {
    // A 404 without a body (a HEAD, a terse server) cannot name a bucket problem; treat it as
    // the object not being there.
    std::string code = parse_s3_error(r.body).code;
    if (code.empty() || code == "NoSuchKey") return;
  }
  fail(r, op, key);
}

std::vector<SourceFile> S3Source::list(const std::string& prefix, const std::string& start_after, size_t limit) {
  if (limit == 0) return {};
  return s3_redacting(config_, [&]() -> std::vector<SourceFile> {
    const std::string base = location_.prefix.empty() ? "" : location_.prefix + "/";
    const std::string key_prefix = base + prefix;
    const std::string bucket_url = s3_object_url(config_, location_.bucket, "");
    std::string after = start_after.empty() ? "" : base + start_after;
    std::string token;
    std::vector<SourceFile> files;

    for (;;) {
      // Parameters in canonical (sorted, encoded) order: older libcurl signs the query as sent.
      std::string query;
      if (!token.empty()) query += "continuation-token=" + s3_uri_encode(token, false) + "&";
      query += "list-type=2&max-keys=" + std::to_string(std::min<size_t>(config_.tuning.list_page_size, limit));
      if (!key_prefix.empty()) query += "&prefix=" + s3_uri_encode(key_prefix, false);
      if (!after.empty()) query += "&start-after=" + s3_uri_encode(after, false);

      S3Request req{bucket_url + "?" + query, "LIST " + s3_name(key_prefix), std::nullopt};
      S3Response r = http_.perform(req);
      if (r.status != 200) fail(r, "LIST", key_prefix);
      S3ListPage page = parse_list_objects_v2(r.body);

      for (S3Object& o : page.objects) {
        if (o.key.compare(0, key_prefix.size(), key_prefix) != 0) continue;  // not ours (defensive)
        std::string rel = o.key.substr(base.size());
        // "folder/" placeholder objects made by consoles and sync tools are not files.
        if (rel.empty() || rel.back() == '/') continue;
        if (!start_after.empty() && rel <= start_after) continue;
        files.push_back(SourceFile{std::move(rel), o.size});
      }
      if (files.size() >= limit) {
        files.erase(files.begin() + static_cast<std::ptrdiff_t>(limit), files.end());  // the first, in key order
        break;
      }
      if (!page.truncated) break;
      if (!page.next_continuation_token.empty()) {
        token = page.next_continuation_token;
      } else if (!page.objects.empty()) {
        token.clear();  // a server without tokens: continue after the last key, ListObjects-V1 style
        after = page.objects.back().key;
      } else {
        throw Error(ErrorKind::kIo, "S3 LIST " + s3_name(key_prefix) +
                                        ": the server said the listing is truncated but gave no way to continue");
      }
    }
    std::sort(files.begin(), files.end(), [](const SourceFile& a, const SourceFile& b) { return a.path < b.path; });
    return files;
  });
}

Status S3Source::read(const std::string& path, std::optional<ReadBuffer>* out) {
  out->reset();
  return read_status(config_, out, [&] {
    const std::string key = key_of(path);
    S3Response r = http_.perform(S3Request{s3_object_url(config_, location_.bucket, key), "GET " + s3_name(key), {}});
    if (r.status == 200) {
      *out = ReadBuffer::copy_of(r.body);
      return;
    }
    check_object_response(r, "GET", key);
  });
}

std::optional<std::string> S3Source::range_body(S3Response& r, const std::string& key, uint64_t offset,
                                                uint64_t length) const {
  if (r.status == 206) {
    if (!r.content_range.empty()) {
      std::optional<uint64_t> first = content_range_first(r.content_range);
      if (!first || *first != offset)
        throw Error(ErrorKind::kIo, "S3 GET " + s3_name(key) + ": asked for bytes from " + std::to_string(offset) +
                                        ", the server sent '" + r.content_range + "'");
    }
    if (r.body.size() > length) r.body.resize(length);
    return std::move(r.body);
  }
  // The server ignored Range: S3Http cuts the range out and answers 206, unless the object is empty.
  if (r.status == 200) {
    if (offset >= r.body.size()) return std::string();
    return r.body.substr(offset, std::min<uint64_t>(length, r.body.size() - offset));
  }
  if (r.status == 416) return std::string();  // the object exists but ends before offset
  check_object_response(r, "GET", key);
  return std::nullopt;
}

Status S3Source::read_range(const std::string& path, uint64_t offset, uint64_t length, std::optional<ReadBuffer>* out) {
  std::vector<std::optional<ReadBuffer>> all;
  Status st = read_ranges({Range{path, offset, length}}, &all);
  *out = st.is_ok() ? std::move(all.front()) : std::nullopt;
  return st;
}

Status S3Source::read_ranges(const std::vector<Range>& ranges, std::vector<std::optional<ReadBuffer>>* result) {
  return read_status(config_, result, [&] {
    // Coalesce: sort by (path, offset) and merge neighbours of one object into spans.
    std::vector<size_t> order(ranges.size());
    std::iota(order.begin(), order.end(), size_t{0});
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return std::tie(ranges[a].path, ranges[a].offset) < std::tie(ranges[b].path, ranges[b].offset);
    });
    constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max() - 1;
    auto end_of = [&](const Range& r) { return r.length > kMax - r.offset ? kMax : r.offset + r.length; };

    struct Span {
      std::string key;
      uint64_t first = 0, end = 0;  // [first, end)
    };
    std::vector<Span> spans;
    std::vector<size_t> span_of(ranges.size());
    for (size_t i : order) {
      const Range& r = ranges[i];
      uint64_t end = end_of(r);
      if (!spans.empty() && spans.back().key == key_of(r.path) &&
          (r.offset <= spans.back().end || r.offset - spans.back().end <= kCoalesceGap) &&
          std::max(end, spans.back().end) - spans.back().first <= kMaxSpan) {
        spans.back().end = std::max(spans.back().end, end);
      } else {
        spans.push_back(Span{key_of(r.path), r.offset, end});
      }
      span_of[i] = spans.size() - 1;
    }

    std::vector<S3Request> requests;
    requests.reserve(spans.size());
    for (const Span& s : spans) {
      // An empty span still asks for one byte: whether the object exists is the answer wanted.
      uint64_t last = s.end > s.first ? s.end - 1 : s.first;
      requests.push_back(S3Request{s3_object_url(config_, location_.bucket, s.key), "GET " + s3_name(s.key),
                                   std::make_pair(s.first, last)});
    }
    std::vector<S3Response> responses = http_.perform(requests);

    std::vector<std::optional<std::string>> span_data(spans.size());
    for (size_t k = 0; k < spans.size(); ++k)
      span_data[k] = range_body(responses[k], spans[k].key, spans[k].first, spans[k].end - spans[k].first);

    std::vector<std::optional<ReadBuffer>>& out = *result;
    out.clear();
    out.resize(ranges.size());
    for (size_t i = 0; i < ranges.size(); ++i) {
      const std::optional<std::string>& data = span_data[span_of[i]];
      if (!data) continue;
      uint64_t rel = ranges[i].offset - spans[span_of[i]].first;
      if (rel >= data->size()) {
        out[i] = ReadBuffer();
      } else {
        out[i] = ReadBuffer::copy_of(std::string_view(*data).substr(rel, ranges[i].length));
      }
    }
  });
}

bool S3Source::exists(const std::string& path) {
  return s3_redacting(config_, [&]() -> bool {
    const std::string key = key_of(path);
    // A one-byte GET rather than HEAD: a HEAD 404 has no body, so it could not tell a missing key
    // (wait for it) from a missing bucket (an error). Empty objects answer 416, which also means
    // "exists".
    S3Response r = http_.perform(S3Request{s3_object_url(config_, location_.bucket, key), "GET " + s3_name(key),
                                           std::make_pair(uint64_t{0}, uint64_t{0})});
    if (r.status == 200 || r.status == 206 || r.status == 416) return true;
    check_object_response(r, "GET", key);
    return false;
  });
}

std::unique_ptr<TrialSource> make_s3_source(const std::string& url, const S3Options& options) {
  return std::make_unique<S3Source>(url, options);
}

}  // namespace trialdb
