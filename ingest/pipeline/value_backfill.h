// Adding the bytes of values stored without them (ingest --values none, then --values all): each
// such value's record is read again from where value_locations says it lies, checked and
// decoded as the ingest does, and its blob stored in place of the header it had. Nothing else
// of the trial is read: on S3 only those records are transferred (read_ranges: ranged GETs,
// neighbours merged).
//
// Memory stays bounded: the values are taken in batches of at most kBackfillBatchBytes of
// records (or one record, when larger), each batch committed on its own, so an interrupted run
// keeps what it added and the next one adds the rest.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>

#include "ingest/pipeline/selection.h"
#include "ingest/source/source.h"
#include "schema/database.h"
#include "schema/status.h"

namespace trialdb {

inline constexpr uint64_t kBackfillBatchBytes = 256u << 20;
inline constexpr size_t kBackfillBatchValues = 4096;

// Adds the bytes of the values of `trial_id` (those `selection` selects) stored without them;
// returns how many. A record that cannot be read or decoded goes to `report` and its value keeps
// its header. `bytes_read` counts the record bytes read.
size_t add_missing_values(Database& db, TrialSource& source, int64_t trial_id, const Selection& selection,
                          bool compress, const std::function<void(const Status&)>& report, uint64_t* bytes_read);

}  // namespace trialdb
