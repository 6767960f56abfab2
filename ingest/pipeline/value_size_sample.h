// The sizes of a trial's values, sampled from a few of its index files before anything is
// ingested: what a new database's page size is chosen from (schema/page_size_policy.h).
//
// The sample reads up to kSampledIndexFiles index files spread evenly over the first index folder
// (steps 0-999), which a listing of one folder finds: a trial's first steps show which tensors it
// saves and how large they are, and a huge trial is not listed twice. Each entry's record length
// stands for its blob's size (the record adds the tensor's name and a few bytes of framing).
// Records small enough to be stored in the value row (ValueWriter::kInlineBlobBytes) are left
// out, as they take no page of their own.
//
// It is advice, not input: a file that cannot be read or parsed, or is larger than an index file
// may be (kMaxIndexFileBytes), is passed over here, as the ingest reads every file again and
// reports what is wrong with it. A trial whose first folder holds nothing (yet) gives an empty
// sample, which keeps the smallest page size.
#pragma once
#include <cstddef>

#include "ingest/source/source.h"
#include "schema/page_size_policy.h"

namespace trialdb {

inline constexpr size_t kSampledIndexFiles = 8;

PageSizeSample sample_value_sizes(TrialSource& source);

}  // namespace trialdb
