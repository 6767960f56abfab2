// Opening a trial location as a TrialSource, and what every source offers on top of the interface.
#include "ingest/source/source.h"

#include "ingest/source/local_source.h"
#include "ingest/source/s3_source.h"

namespace trialdb {

std::optional<std::string> read_at_most(TrialSource& source, const std::string& path, uint64_t max_bytes) {
  std::optional<std::string> text = source.read_range(path, 0, max_bytes + 1);
  if (text && text->size() > max_bytes)
    throw Error(Status::invalid("the file is larger than the limit of " + std::to_string(max_bytes) +
                                " bytes for a file of this kind")
                    .at(path));
  return text;
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

}  // namespace trialdb
