// Writing objects to S3 over S3Http (signed by libcurl, retried there): one object uploaded as
// it is written, with a single PutObject when it stays under one part and a multipart upload
// otherwise (parts of part_bytes, at most one part held in memory); and whole-object GET and
// DELETE. An object appears only once complete() succeeds; an upload destroyed before that is
// aborted, so no half-written object is ever visible. Errors name s3://bucket/key, never a
// secret (S3Http's messages pass through s3_redact).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "s3/s3_http.h"

namespace trialdb {

// S3's smallest part but the last is 5 MiB; 8 MiB parts keep a 100 GB object under the 10,000
// parts a multipart upload may have.
inline constexpr size_t kS3DefaultPartBytes = 8u << 20;

class S3ObjectUpload {
 public:
  S3ObjectUpload(S3Http& http, const S3Config& config, std::string bucket, std::string key,
                 size_t part_bytes = kS3DefaultPartBytes);
  ~S3ObjectUpload();
  S3ObjectUpload(const S3ObjectUpload&) = delete;
  S3ObjectUpload& operator=(const S3ObjectUpload&) = delete;

  void write(std::string_view bytes);
  // Makes the object visible. Throws Error (kIo) naming it.
  void complete();

 private:
  void start_multipart();
  void upload_part();
  std::string url(const std::string& query = "") const;
  S3Response send(const std::string& method, const std::string& query, std::string_view body, const char* what);

  S3Http& http_;
  const S3Config& config_;
  std::string bucket_, key_;
  size_t part_bytes_;
  std::string buffer_;              // the part being filled
  std::string upload_id_;           // "" until a multipart upload started
  std::vector<std::string> etags_;  // of the parts uploaded, in order
  bool done_ = false;
};

// The object's bytes, or nullopt when there is no such key. Throws Error (kIo) otherwise (a
// missing bucket included).
std::optional<std::string> s3_get_object(S3Http& http, const S3Config& config, const std::string& bucket,
                                         const std::string& key);
void s3_delete_object(S3Http& http, const S3Config& config, const std::string& bucket, const std::string& key);

// Lower-case hex SHA-256 (the payload hash SigV4 signs).
std::string sha256_hex(std::string_view bytes);

}  // namespace trialdb
