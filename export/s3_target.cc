// An export to an S3 prefix (s3_target.h).
#include "export/s3_target.h"

#include "s3/s3_upload.h"

namespace trialdb::exporter {

namespace {

class S3File : public OutputFile {
 public:
  S3File(S3Http& http, const S3Config& config, const std::string& bucket, const std::string& key)
      : upload_(http, config, bucket, key) {}
  void write(std::string_view bytes) override { upload_.write(bytes); }
  void commit() override { upload_.complete(); }

 private:
  S3ObjectUpload upload_;
};

}  // namespace

S3Target::S3Target(const std::string& url, const S3Options& options)
    : location_(parse_s3_url(url)),
      config_(resolve_s3_config(options)),
      http_(std::make_unique<S3Http>(config_)),
      lister_(url, options) {}

std::string S3Target::key(const std::string& path) const {
  return location_.prefix.empty() ? path : location_.prefix + "/" + path;
}

std::unique_ptr<OutputFile> S3Target::create(const std::string& path) {
  return std::make_unique<S3File>(*http_, config_, location_.bucket, key(path));
}

std::optional<std::string> S3Target::read(const std::string& path) {
  return s3_get_object(*http_, config_, location_.bucket, key(path));
}

void S3Target::remove(const std::string& path) { s3_delete_object(*http_, config_, location_.bucket, key(path)); }

std::vector<std::string> S3Target::list(const std::string& folder) {
  const std::string prefix = folder + "/";
  std::vector<std::string> names;
  for (const SourceFile& f : lister_.list(prefix)) {
    const std::string name = f.path.substr(prefix.size());
    if (name.find('/') == std::string::npos) names.push_back(name);  // not in a subfolder
  }
  return names;
}

std::string S3Target::describe(const std::string& path) const { return "s3://" + location_.bucket + "/" + key(path); }

}  // namespace trialdb::exporter
