// Writing, reading and deleting whole S3 objects (s3_upload.h).
#include "s3/s3_upload.h"

#include <openssl/sha.h>

#include "s3/s3_xml.h"

namespace trialdb {

namespace {

constexpr long kHttpOk = 200, kHttpNoContent = 204, kHttpNotFound = 404;

std::string object_name(const std::string& bucket, const std::string& key) { return "s3://" + bucket + "/" + key; }

// The text between <tag> and </tag> in a small XML answer ("" when absent).
std::string xml_element(const std::string& xml, const std::string& tag) {
  const size_t open = xml.find("<" + tag + ">");
  if (open == std::string::npos) return "";
  const size_t from = open + tag.size() + 2;
  const size_t close = xml.find("</" + tag + ">", from);
  return close == std::string::npos ? "" : xml_unescape(xml.substr(from, close - from));
}

std::string failure(const S3Response& r) {
  const S3ErrorBody err = parse_s3_error(r.body);
  return "HTTP " + std::to_string(r.status) + (err.code.empty() ? "" : " " + err.code) +
         (err.message.empty() ? "" : ": " + err.message);
}

}  // namespace

std::string sha256_hex(std::string_view bytes) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), digest);
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (unsigned char b : digest) out += {hex[b >> 4], hex[b & 15]};
  return out;
}

S3ObjectUpload::S3ObjectUpload(S3Http& http, const S3Config& config, std::string bucket, std::string key,
                               size_t part_bytes)
    : http_(http), config_(config), bucket_(std::move(bucket)), key_(std::move(key)), part_bytes_(part_bytes) {}

S3ObjectUpload::~S3ObjectUpload() {
  if (done_ || upload_id_.empty()) return;
  try {  // best effort: an upload left open is also removed by the bucket's lifecycle rules
    send("DELETE", "uploadId=" + s3_uri_encode(upload_id_, false), {}, "AbortMultipartUpload");
  } catch (const Error&) {
  }
}

std::string S3ObjectUpload::url(const std::string& query) const {
  return s3_object_url(config_, bucket_, key_) + (query.empty() ? "" : "?" + query);
}

S3Response S3ObjectUpload::send(const std::string& method, const std::string& query, std::string_view body,
                                const char* what) {
  S3Request request;
  request.url = url(query);
  request.what = std::string(what) + " " + object_name(bucket_, key_);
  request.method = method;
  request.body = body;
  if (method == "PUT" || method == "POST") request.body_sha256 = sha256_hex(body);
  S3Response r = http_.perform(request);
  // CompleteMultipartUpload may answer 200 with an error in its body.
  const bool ok = r.status == kHttpOk || r.status == kHttpNoContent;
  if (!ok || !parse_s3_error(r.body).code.empty())
    throw Error(ErrorKind::kIo, s3_redact("S3 " + request.what + ": " + failure(r), config_));
  return r;
}

void S3ObjectUpload::write(std::string_view bytes) {
  while (!bytes.empty()) {
    const size_t n = std::min(bytes.size(), part_bytes_ - buffer_.size());
    buffer_.append(bytes.substr(0, n));
    bytes.remove_prefix(n);
    if (buffer_.size() == part_bytes_) {
      if (upload_id_.empty()) start_multipart();
      upload_part();
    }
  }
}

void S3ObjectUpload::start_multipart() {
  const S3Response r = send("POST", "uploads=", {}, "CreateMultipartUpload");
  upload_id_ = xml_element(r.body, "UploadId");
  if (upload_id_.empty())
    throw Error(ErrorKind::kIo,
                "S3 CreateMultipartUpload " + object_name(bucket_, key_) + ": no UploadId in the answer");
}

void S3ObjectUpload::upload_part() {
  const std::string query =
      "partNumber=" + std::to_string(etags_.size() + 1) + "&uploadId=" + s3_uri_encode(upload_id_, false);
  const S3Response r = send("PUT", query, buffer_, "UploadPart");
  // Without its ETag a part cannot be named in CompleteMultipartUpload ("" quoted is none either).
  if (r.etag.empty() || r.etag == "\"\"")
    throw Error(ErrorKind::kIo,
                "S3 UploadPart " + std::to_string(etags_.size() + 1) + " of " + object_name(bucket_, key_) +
                    ": no ETag in the answer; the part cannot be committed, so the object was not stored");
  etags_.push_back(r.etag);
  buffer_.clear();
}

void S3ObjectUpload::complete() {
  if (upload_id_.empty()) {
    send("PUT", "", buffer_, "PutObject");
  } else {
    if (!buffer_.empty()) upload_part();
    std::string xml = "<CompleteMultipartUpload>";
    for (size_t i = 0; i < etags_.size(); ++i)
      xml += "<Part><PartNumber>" + std::to_string(i + 1) + "</PartNumber><ETag>" + etags_[i] + "</ETag></Part>";
    xml += "</CompleteMultipartUpload>";
    // S3 may answer 200 and put an error in the body (send() refuses <Error>); only a
    // CompleteMultipartUploadResult says the object exists.
    const S3Response r = send("POST", "uploadId=" + s3_uri_encode(upload_id_, false), xml, "CompleteMultipartUpload");
    if (xml_root_name(r.body) != "CompleteMultipartUploadResult")
      throw Error(ErrorKind::kIo, "S3 CompleteMultipartUpload " + object_name(bucket_, key_) + ": HTTP " +
                                      std::to_string(r.status) +
                                      " without a CompleteMultipartUploadResult in the "
                                      "answer; the object was not stored");
  }
  done_ = true;
  buffer_.clear();
}

std::optional<std::string> s3_get_object(S3Http& http, const S3Config& config, const std::string& bucket,
                                         const std::string& key) {
  S3Request request;
  request.url = s3_object_url(config, bucket, key);
  request.what = "GET " + object_name(bucket, key);
  S3Response r = http.perform(request);
  if (r.status == kHttpNotFound && parse_s3_error(r.body).code != "NoSuchBucket") return std::nullopt;
  if (r.status != kHttpOk) throw Error(ErrorKind::kIo, s3_redact("S3 " + request.what + ": " + failure(r), config));
  return std::move(r.body);
}

void s3_delete_object(S3Http& http, const S3Config& config, const std::string& bucket, const std::string& key) {
  S3Request request;
  request.url = s3_object_url(config, bucket, key);
  request.what = "DELETE " + object_name(bucket, key);
  request.method = "DELETE";
  const S3Response r = http.perform(request);
  if (r.status != kHttpOk && r.status != kHttpNoContent && r.status != kHttpNotFound)
    throw Error(ErrorKind::kIo, s3_redact("S3 " + request.what + ": " + failure(r), config));
}

}  // namespace trialdb
