// Preparing one index file on a worker thread: read the index, read or map the span of the event
// file its entries point at, decode and CRC-check every record, compute reductions, encode the
// value blobs (in place where possible), and merge saved reductions and shapes into one
// PreparedValue per tensor. Touches only the source, the budget and its own result.
#pragma once
#include <cstddef>
#include <cstdint>

#include "ingest/pipeline/prepared_file.h"
#include "ingest/pipeline/read_budget.h"
#include "ingest/pipeline/selection.h"
#include "ingest/source/source.h"

namespace trialdb {

struct PrepareOptions {
  bool ended = false;                    // the trial has ended: what is incomplete now is an error
  bool compress = false;                 // zlib blobs that shrink
  int threads = 1;                       // threads one large event file may be decoded on
  uint64_t max_blob_bytes = 0;           // SQLite's length limit for one value
  ReadBudget* budget = nullptr;          // shared by the pass's files, taken in ticket order
  const Selection* selection = nullptr;  // the tensors to store (null: all)
  bool store_values = true;              // false: raw values keep only their header (ingest --values none)
};

// An index file larger than this is an error, never read whole (smdebug's are kilobytes).
inline constexpr uint64_t kMaxIndexFileBytes = 64u << 20;

// Records of tensors the selection leaves out, or already stored (file.stored), are not read.
// `ticket` is the file's turn at the budget (its position in the pass). A file the source fails
// to read (source.h) is this file's error, never the pass's: kInvalidInput (the index or its
// event file can never be read) is reported and the file ingested as far as it goes (its saved
// shapes), like a missing event file of an ended trial; kIo (it may be readable later: a
// permission, an I/O error) is reported and the file left for the next pass (FileStatus::kRetry).
PreparedFile prepare_file(TrialSource& source, const PendingFile& file, size_t ticket, const PrepareOptions& options);

}  // namespace trialdb
