// A real S3-speaking server for the tests: s3rver (npm, pinned in tests/ingest/source/s3/package.json) run by
// node on 127.0.0.1 with a port the OS picks, in a fresh temporary directory; stopped (and its
// data removed) by the destructor. Plus a small signed-PUT uploader to fill buckets.
//
// s3rver knows one account, S3RVER/S3RVER: an unknown access key id gets 403 InvalidAccessKeyId.
// It does not verify SigV4 signatures, so wrong-secret cases are tested against the stub server.
#pragma once
#include <sys/types.h>

#include <optional>
#include <cstdint>
#include <string>

namespace trialdb::test {

inline constexpr const char* kS3rverKey = "S3RVER";
inline constexpr const char* kS3rverSecret = "S3RVER";

// The node executable on PATH, if any.
std::optional<std::string> find_node();

class S3rverProcess {
 public:
  // Starts s3rver and waits (up to 30 s) until it accepts connections. Throws std::runtime_error
  // with the server's log when it cannot.
  S3rverProcess(const std::string& node, const std::string& s3rver_js);
  ~S3rverProcess();
  S3rverProcess(const S3rverProcess&) = delete;
  S3rverProcess& operator=(const S3rverProcess&) = delete;

  std::string endpoint() const { return "http://127.0.0.1:" + std::to_string(port_); }
  const std::string& data_dir() const { return dir_; }
  // The bytes of response bodies sent so far (counted by s3rver_des_shim.js).
  uint64_t bytes_sent() const;

 private:
  std::string read_log() const;
  void stop();

  std::string dir_;
  pid_t pid_ = -1;
  int port_ = 0;
};

// PUTs with libcurl, signed by CURLOPT_AWS_SIGV4, path-style against endpoint. Each returns the
// HTTP status (0 on a transport error).
class S3Uploader {
 public:
  S3Uploader(std::string endpoint, std::string key = kS3rverKey, std::string secret = kS3rverSecret);
  ~S3Uploader();
  long create_bucket(const std::string& bucket);
  long put(const std::string& bucket, const std::string& key, const std::string& body);
  // Uploads every file under local_dir to bucket/prefix/<relative path>; returns the file count.
  // Throws std::runtime_error on the first failed PUT.
  size_t put_tree(const std::string& local_dir, const std::string& bucket, const std::string& prefix);

 private:
  long request(const std::string& url, const std::string& body);
  std::string endpoint_, userpwd_;
  void* curl_ = nullptr;
};

}  // namespace trialdb::test
