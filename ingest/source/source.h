// Where a trial's files come from: a local folder or an S3 prefix. The ingester sees only this
// interface, so S3 reuses the local path exactly (index offsets become ranged GETs).
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ingest/source/mapped_range.h"
#include "ingest/source/read_buffer.h"
#include "schema/status.h"

namespace trialdb {

// Errors (schema/status.h). Reads answer a Status, their bytes going through a pointer argument
// (LevelDB's Env style) as a ReadBuffer (read_buffer.h: allocated for the read, never zero-filled
// first). A read of one file that fails names the file: kIo when it could not be read now but may
// be later (no permission, an I/O error, an unreachable S3), kInvalidInput when the path can
// never name a readable regular file (a folder, a FIFO or device, a symlink loop or one leading
// outside the trial, a component that is not a folder, a name too long). The ingester
// makes either one file's error (file_problem below), so one bad file never stops a pass. kUsage
// when the location or the S3 settings (URL, endpoint, credentials) are unusable. A file that
// does not exist (yet) is not an error: the read is OK and leaves std::nullopt. list() and
// exists() throw Error for what is not one file's problem.

// One entry of a listing. `problem` is not OK for what the listing found but cannot offer as a
// readable file: a folder it could not list (path ends in '/'), a FIFO, device or socket, a
// dangling symlink, a symlink leading outside the trial. The caller reports these; nothing found
// is left out silently.
struct SourceFile {
  SourceFile(std::string path_in, uint64_t size_in, Status problem_in = Status())
      : path(std::move(path_in)), size(size_in), problem(std::move(problem_in)) {}
  std::string path;  // relative to the trial root, '/'-separated
  uint64_t size = 0;
  Status problem;
};

// TrialSource::list's limit when every entry is wanted.
inline constexpr size_t kWholeListing = SIZE_MAX;

class TrialSource {
 public:
  virtual ~TrialSource() = default;
  // Human-readable root (folder or s3://bucket/prefix), used in messages and trials.path.
  virtual std::string root() const = 0;
  // Files under a relative directory prefix (e.g. "index/"), recursively, sorted by path.
  // start_after: only paths > start_after (S3 ListObjectsV2 start-after), "" for all. A prefix
  // that does not exist (yet) lists nothing. limit: the listing stops once it has this many
  // entries, so that asking whether a prefix holds anything costs one entry, not every file.
  virtual std::vector<SourceFile> list(const std::string& prefix, const std::string& start_after = "",
                                       size_t limit = kWholeListing) = 0;
  // *out: the whole file, or std::nullopt when it does not exist (yet).
  virtual Status read(const std::string& path, std::optional<ReadBuffer>* out) = 0;
  // *out: the byte range [offset, offset + length); fewer bytes when the file is shorter (a live
  // writer may not have flushed yet); std::nullopt when the file does not exist.
  virtual Status read_range(const std::string& path, uint64_t offset, uint64_t length,
                            std::optional<ReadBuffer>* out) = 0;
  // *out: the same range mapped into memory (MappedRange) where the source can do that, else
  // nullptr (also when the file does not exist): the caller then reads it with read_range.
  virtual Status map_range(const std::string& path, uint64_t offset, uint64_t length,
                           std::unique_ptr<MappedRange>* out) {
    (void)path, (void)offset, (void)length;
    out->reset();
    return Status();
  }
  // Several ranges at once, *out in the same order; implementations may run them concurrently
  // (S3: curl multi). The first failure is the answer.
  struct Range {
    std::string path;
    uint64_t offset = 0, length = 0;
  };
  virtual Status read_ranges(const std::vector<Range>& ranges, std::vector<std::optional<ReadBuffer>>* out) {
    out->clear();
    out->resize(ranges.size());
    for (size_t i = 0; i < ranges.size(); ++i)
      if (Status st = read_range(ranges[i].path, ranges[i].offset, ranges[i].length, &(*out)[i]); !st.is_ok())
        return st;
    return Status();
  }
  virtual bool exists(const std::string& path) = 0;
};

// *out: the whole file, never holding more than max_bytes + 1 of it: a file larger than max_bytes
// is kInvalidInput (naming the limit), whatever size it claims. std::nullopt when it does not exist.
Status read_at_most(TrialSource& source, const std::string& path, uint64_t max_bytes, std::optional<ReadBuffer>* out);

// A failed read as one file's problem: kIo (it may be readable later) and kInvalidInput are
// returned for the caller to report against the file and go on; any other kind (kUsage: unusable
// S3 settings) is not the file's and is thrown as Error. OK stays OK.
Status file_problem(Status read_status);

// Settings for s3:// locations; empty fields fall back to the standard AWS environment
// variables (docs/S3.md).
struct SourceOptions {
  std::string s3_endpoint;            // --endpoint, else AWS_ENDPOINT_URL
  std::string s3_region;              // --region, else AWS_REGION / AWS_DEFAULT_REGION
  std::optional<bool> s3_path_style;  // --path-style, else automatic
};

// Whether a location names an S3 prefix (s3://bucket/prefix) rather than a local folder.
inline bool is_s3_location(std::string_view location) { return location.substr(0, 5) == "s3://"; }

// Opens a local folder or an s3://bucket/prefix URL.
std::unique_ptr<TrialSource> open_source(const std::string& location, const SourceOptions& options = {});

// Whether the location holds a trial: smdebug finds values through index/ files that point into
// events/ files, so a location with neither is not a trial (kUsage naming it, and the trials
// found below it, if any), and one with only one of them cannot be read whole (kInvalidInput).
Status check_trial_layout(TrialSource& source);

}  // namespace trialdb
