// A trial stored under an S3 prefix, read through the same TrialSource interface as a local
// folder: list() is ListObjectsV2 (paginated, start-after), read() a GET, read_range() a ranged
// GET, read_ranges() many ranged GETs in flight at once.
//
// Missing objects behave like missing files (std::nullopt), so a live trial that is still being
// uploaded is waited for, not an error. Anything else that goes wrong (credentials rejected, no
// such bucket, wrong region, retries exhausted) is an Error (kIo) naming the bucket/key and S3's
// error code; secrets never appear in messages.
#pragma once
#include <memory>
#include <string>

#include "s3/s3_config.h"
#include "s3/s3_http.h"
#include "ingest/source/source.h"

namespace trialdb {

class S3Source : public TrialSource {
 public:
  // url: s3://bucket[/prefix]. Throws Error (kUsage) for a bad URL, missing credentials or a bad
  // endpoint; does not touch the network.
  S3Source(const std::string& url, const S3Options& options = {});

  std::string root() const override;
  std::vector<SourceFile> list(const std::string& prefix, const std::string& start_after = "",
                               size_t limit = kWholeListing) override;
  Status read(const std::string& path, std::optional<ReadBuffer>* out) override;
  Status read_range(const std::string& path, uint64_t offset, uint64_t length, std::optional<ReadBuffer>* out) override;
  Status read_ranges(const std::vector<Range>& ranges, std::vector<std::optional<ReadBuffer>>* out) override;
  bool exists(const std::string& path) override;

  const S3Config& config() const { return config_; }
  uint64_t requests_made() const { return http_.exchanges(); }

 private:
  std::string key_of(const std::string& path) const;
  std::string s3_name(const std::string& key) const { return "s3://" + location_.bucket + "/" + key; }
  // Interprets a final non-success response as an Error (kIo); returns normally only for a
  // 404 NoSuchKey (the object does not exist yet), which callers turn into std::nullopt.
  void check_object_response(const S3Response& r, const std::string& op, const std::string& key) const;
  [[noreturn]] void fail(const S3Response& r, const std::string& op, const std::string& key) const;
  // The body of a ranged GET, trimmed to [offset, offset+length) if the server ignored Range.
  std::optional<std::string> range_body(S3Response& r, const std::string& key, uint64_t offset, uint64_t length) const;

  S3Location location_;
  S3Config config_;
  S3Http http_;
};

// What open_source() calls for s3:// locations.
std::unique_ptr<TrialSource> make_s3_source(const std::string& url, const S3Options& options = {});

}  // namespace trialdb
