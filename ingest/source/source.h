// Where a trial's files come from: a local folder or an S3 prefix. The ingester sees only this
// interface, so S3 reuses the local path exactly (index offsets become ranged GETs).
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ingest/source/mapped_range.h"
#include "schema/status.h"

namespace trialdb {

// A source that cannot go on throws Error (schema/status.h): kIo when a file or object cannot be
// listed or read (the message names the file or s3:// URL), kUsage when the location or the S3
// settings (URL, endpoint, credentials) are unusable. A file that does not exist (yet) is not an
// error: read() answers std::nullopt.

struct SourceFile {
  std::string path;   // relative to the trial root, '/'-separated
  uint64_t size = 0;
};

class TrialSource {
 public:
  virtual ~TrialSource() = default;
  // Human-readable root (folder or s3://bucket/prefix), used in messages and trials.path.
  virtual std::string root() const = 0;
  // Files under a relative directory prefix (e.g. "index/"), recursively, sorted by path.
  // start_after: only paths > start_after (S3 ListObjectsV2 start-after), "" for all.
  virtual std::vector<SourceFile> list(const std::string& prefix, const std::string& start_after = "") = 0;
  // Whole file, or std::nullopt when it does not exist (yet).
  virtual std::optional<std::string> read(const std::string& path) = 0;
  // Byte range [offset, offset + length). Returns fewer bytes when the file is shorter (a live
  // writer may not have flushed yet); std::nullopt when the file does not exist.
  virtual std::optional<std::string> read_range(const std::string& path, uint64_t offset, uint64_t length) = 0;
  // The same range mapped into memory (MappedRange) where the source can do that, else nullptr
  // (also when the file does not exist): the caller then reads it with read_range.
  virtual std::unique_ptr<MappedRange> map_range(const std::string& path, uint64_t offset, uint64_t length) {
    (void)path, (void)offset, (void)length;
    return nullptr;
  }
  // Several ranges at once; implementations may run them concurrently (S3: curl multi).
  struct Range {
    std::string path;
    uint64_t offset = 0, length = 0;
  };
  virtual std::vector<std::optional<std::string>> read_ranges(const std::vector<Range>& ranges) {
    std::vector<std::optional<std::string>> out;
    out.reserve(ranges.size());
    for (const auto& r : ranges) out.push_back(read_range(r.path, r.offset, r.length));
    return out;
  }
  virtual bool exists(const std::string& path) = 0;
};

// Settings for s3:// locations; empty fields fall back to the standard AWS environment
// variables (docs/S3.md).
struct SourceOptions {
  std::string s3_endpoint;           // --endpoint, else AWS_ENDPOINT_URL
  std::string s3_region;             // --region, else AWS_REGION / AWS_DEFAULT_REGION
  std::optional<bool> s3_path_style; // --path-style, else automatic
};

// Opens a local folder or an s3://bucket/prefix URL.
std::unique_ptr<TrialSource> open_source(const std::string& location, const SourceOptions& options = {});

}  // namespace trialdb
