// A trial in a local folder. Only regular files inside the trial folder are read: every file is
// opened without blocking (a FIFO never hangs the ingest) and checked with fstat, and a path that
// resolves (through symlinks) outside the folder is refused. Listings do not follow a symlinked
// folder into one already listed, so links that form a cycle cost nothing.
#pragma once
#include <string>

#include "ingest/source/source.h"

namespace trialdb {

class LocalSource : public TrialSource {
 public:
  explicit LocalSource(std::string root);
  std::string root() const override { return root_; }
  std::vector<SourceFile> list(const std::string& prefix, const std::string& start_after = "",
                               size_t limit = kWholeListing) override;
  Status read(const std::string& path, std::optional<ReadBuffer>* out) override;
  Status read_range(const std::string& path, uint64_t offset, uint64_t length, std::optional<ReadBuffer>* out) override;
  Status map_range(const std::string& path, uint64_t offset, uint64_t length,
                   std::unique_ptr<MappedRange>* out) override;
  bool exists(const std::string& path) override;

 private:
  std::string full(const std::string& rel) const { return root_ + "/" + rel; }
  // *fd: an open descriptor of the regular file `rel` with its size, -1 when it does not exist;
  // a failed Status (source.h) for anything else.
  Status open_regular(const std::string& rel, int* fd, uint64_t* size) const;
  // Whether `rel` (which exists) resolves to a path inside the trial folder.
  bool inside(const std::string& rel) const;

  std::string root_;
  std::string real_root_;  // root_ with every symlink resolved
};

}  // namespace trialdb
