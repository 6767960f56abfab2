// Opening a trial location as a TrialSource, and what every source offers on top of the interface.
#include "ingest/source/source.h"

#include "ingest/source/local_source.h"
#include "ingest/source/s3_source.h"

#include <set>

namespace trialdb {

namespace {
constexpr size_t kTrialsNamed = 10;  // trials named when a folder of trials is given
}  // namespace

Status read_at_most(TrialSource& source, const std::string& path, uint64_t max_bytes, std::optional<ReadBuffer>* out) {
  if (Status st = source.read_range(path, 0, max_bytes + 1, out); !st.is_ok()) return st;
  if (*out && (*out)->size() > max_bytes) {
    out->reset();
    return Status::invalid("the file is larger than the limit of " + std::to_string(max_bytes) +
                           " bytes for a file of this kind")
        .at(path);
  }
  return Status();
}

Status file_problem(Status read_status) {
  const ErrorKind kind = read_status.kind();
  if (kind != ErrorKind::kOk && kind != ErrorKind::kIo && kind != ErrorKind::kInvalidInput) throw Error(read_status);
  return read_status;
}

std::unique_ptr<TrialSource> open_source(const std::string& location, const SourceOptions& options) {
  if (is_s3_location(location)) {
    S3Options s3;
    s3.endpoint = options.s3_endpoint;
    s3.region = options.s3_region;
    s3.path_style = options.s3_path_style;
    return make_s3_source(location, s3);
  }
  return std::make_unique<LocalSource>(location);
}

Status check_trial_layout(TrialSource& source) {
  const bool index = !source.list("index/", "", 1).empty(), events = !source.list("events/", "", 1).empty();
  if (index && events) return Status();
  if (index) return Status::invalid("has index/ files but no events/ files they point into").at(source.root());
  if (events)
    return Status::invalid("has events/ files but no index/ files (smdebug finds values through them)")
        .at(source.root());
  // Not a trial: the trials below it, if it is a folder of trials (a path ".../<trial>/index/...").
  std::set<std::string> below;
  const std::string kIndex = "/index/";
  for (const SourceFile& f : source.list("")) {
    if (const size_t at = f.path.find(kIndex); at != std::string::npos) below.insert(f.path.substr(0, at));
    if (below.size() > kTrialsNamed) break;
  }
  if (below.empty()) return Status::usage("not a trial: no index/ or events/ files").at(source.root());
  std::string names;
  size_t n = 0;
  for (const std::string& b : below)
    if (n++ < kTrialsNamed) names += (names.empty() ? "" : ", ") + b;
  if (below.size() > kTrialsNamed) names += ", ...";
  return Status::usage("not a trial: no index/ or events/ files; trials below it: " + names).at(source.root());
}

}  // namespace trialdb
