// An export to s3://bucket/prefix (target.h): every file an S3 object uploaded as it is written
// (s3/s3_upload.h: one PUT, or a multipart upload for files over one part), visible
// only once complete (a PUT over an existing key replaces it in one step); credentials, region and endpoint as for
// `ingest s3://...` (docs/S3.md).
#pragma once
#include <memory>
#include <string>

#include "export/target.h"
#include "ingest/source/s3_source.h"
#include "s3/s3_http.h"

namespace trialdb::exporter {

class S3Target : public ExportTarget {
 public:
  // Throws Error (kUsage) for a URL that is not s3://bucket[/prefix] or missing credentials.
  explicit S3Target(const std::string& url, const S3Options& options = {});
  std::unique_ptr<OutputFile> create(const std::string& path) override;
  std::optional<std::string> read(const std::string& path) override;
  void remove(const std::string& path) override;
  std::vector<std::string> list(const std::string& folder) override;
  std::string describe(const std::string& path) const override;

 private:
  std::string key(const std::string& path) const;
  S3Location location_;
  S3Config config_;
  std::unique_ptr<S3Http> http_;
  S3Source lister_;  // ListObjectsV2 of the same prefix
};

}  // namespace trialdb::exporter
