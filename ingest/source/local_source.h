// A trial in a local folder.
#pragma once
#include <string>

#include "ingest/source/source.h"

namespace trialdb {

class LocalSource : public TrialSource {
 public:
  explicit LocalSource(std::string root);
  std::string root() const override { return root_; }
  std::vector<SourceFile> list(const std::string& prefix, const std::string& start_after) override;
  std::optional<std::string> read(const std::string& path) override;
  std::optional<std::string> read_range(const std::string& path, uint64_t offset, uint64_t length) override;
  std::unique_ptr<MappedRange> map_range(const std::string& path, uint64_t offset, uint64_t length) override;
  bool exists(const std::string& path) override;

 private:
  std::string full(const std::string& rel) const { return root_ + "/" + rel; }
  std::string root_;
};

}  // namespace trialdb
