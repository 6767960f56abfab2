// Where an export goes: a local folder or (s3_target.h) an S3 prefix. Paths are relative to the
// export's root ("reductions/trial=t/part-0.parquet"). A file is never visible half-written: it
// appears whole on commit() (a temporary name then rename; on S3 the completion of a multipart
// upload), replacing a file of that name in one step, and an OutputFile destroyed without
// commit() leaves nothing behind.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "parquet/file_writer.h"

namespace trialdb::exporter {

class OutputFile : public parquet::ByteSink {
 public:
  // Makes the file visible under its name. Throws Error (kIo) naming it.
  virtual void commit() = 0;
};

class ExportTarget {
 public:
  virtual ~ExportTarget() = default;
  virtual std::unique_ptr<OutputFile> create(const std::string& path) = 0;
  // The whole file, or nullopt when there is none.
  virtual std::optional<std::string> read(const std::string& path) = 0;
  virtual void remove(const std::string& path) = 0;
  // The names of the files directly in `folder` (none when it does not exist).
  virtual std::vector<std::string> list(const std::string& folder) = 0;
  // The path as the user knows it (messages): "/out/x" or "s3://bucket/prefix/x".
  virtual std::string describe(const std::string& path) const = 0;
  // Whether files create()d beforehand may be written from several threads at once.
  virtual bool writes_in_parallel() const { return false; }
};

// A local folder, created as needed. A file is written as ".<name>.tmp" beside its final name
// (engines skip names starting with '.'), flushed to disk, then renamed. Symbolic links inside
// the folder are never followed: a path through one, or to one, is an error naming it.
class LocalTarget : public ExportTarget {
 public:
  explicit LocalTarget(std::string root);
  std::unique_ptr<OutputFile> create(const std::string& path) override;
  std::optional<std::string> read(const std::string& path) override;
  void remove(const std::string& path) override;
  std::vector<std::string> list(const std::string& folder) override;
  std::string describe(const std::string& path) const override;
  bool writes_in_parallel() const override { return true; }

 private:
  std::string root_;
};

}  // namespace trialdb::exporter
