#include "ingest/source.h"

#include "ingest/local_source.h"

namespace trialdb {

std::unique_ptr<TrialSource> open_source(const std::string& location) {
  if (location.rfind("s3://", 0) == 0) throw SourceError(location + ": S3 support is not built in");
  return std::make_unique<LocalSource>(location);
}

}  // namespace trialdb
