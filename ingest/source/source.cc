#include "ingest/source/source.h"

#include "ingest/source/local_source.h"
#include "ingest/source/s3_source.h"

namespace trialdb {

std::unique_ptr<TrialSource> open_source(const std::string& location, const SourceOptions& options) {
  if (location.rfind("s3://", 0) == 0) {
    S3Options s3;
    s3.endpoint = options.s3_endpoint;
    s3.region = options.s3_region;
    s3.path_style = options.s3_path_style;
    return make_s3_source(location, s3);
  }
  return std::make_unique<LocalSource>(location);
}

}  // namespace trialdb
