// What preparing one index file produces, handed from a preparing thread to the writer: the
// file's step, worker and mode, and one PreparedValue per tensor (raw value blob, saved shape,
// reductions), plus what was wrong with it.
#pragma once
#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "ingest/format/event_decoder.h"
#include "ingest/source/mapped_range.h"
#include "ingest/source/read_buffer.h"
#include "kernels/distribution.h"
#include "kernels/reductions.h"
#include "schema/status.h"
#include "schema/value_blob.h"

namespace trialdb {

// An index file waiting to be prepared: one step of one worker.
struct PendingFile {
  std::string path;  // relative to the trial root
  int64_t step = 0;
  std::string worker;
  // A file read before under a selection (partial_file): the tensors of it already stored,
  // whose records are not read again.
  std::set<std::string> stored;
};

// A value blob (docs/BLOB_FORMAT.md), built on a preparing thread: bytes of its own, or where it
// was built in place in the event file's span (PreparedFile keeps the span alive).
struct ValueBlob {
  std::string owned;
  std::string_view in_span;
  std::string_view bytes() const { return in_span.data() ? in_span : std::string_view(owned); }
};

// Where a value's reductions are, as stored in value.red_src.
enum class ReductionSource : int {
  kNone = 0,           // no reductions
  kColumns = 1,        // the r_* / ra_* columns, red_mask saying which are present
  kScalarElement = 2,  // a one-element value: its element is in r_min, all 18 follow from it
};

// One tensor's contribution to one (step, worker): raw value, saved shape, reductions.
struct PreparedValue {
  std::string tensor;
  bool has_raw = false;
  DType dtype = DType::Float32;
  std::vector<int64_t> dims;
  ValueBlob blob;
  bool raw_too_large = false;  // has_raw, but the value exceeds SQLite's length limit: no blob
  uint64_t record_offset = 0;  // has_raw: where its record lies in the file's event file
  uint64_t record_length = 0;
  bool has_shape = false;  // a saved shape (shape_payload) when there is no raw value
  std::vector<int64_t> saved_shape;
  std::string shape_text;  // value.shape, built on a preparing thread (the writer binds it)
  ReductionSource red_src = ReductionSource::kNone;
  uint32_t red_mask = 0;  // with kColumns: bit i set = red[i] present
  // Bit i set = red[i] (or, with kScalarElement, what the views derive from the element) is
  // computed from the raw value's elements and equals tensor_reduce()'s answer (value.red_computed).
  uint32_t red_computed = 0;
  double red[kAllReductions] = {};
  // Stored unless red_src is kScalarElement (the views derive a one-element value's from it).
  bool has_distribution = false;
  Distribution distribution;
};

enum class FileStatus {
  kReady,  // to be written (values and/or errors)
  kWait,   // not yet complete on disk: looked at again on the next pass
  kRetry,  // a file could not be read now (kIo in errors): reported, nothing of it stored, and
           // read again on the next pass and the next run, as long as it fails
};

struct PreparedFile {
  PendingFile file;
  FileStatus status = FileStatus::kReady;
  bool index_valid = false;  // false: only errors to record, no step data
  Mode mode = Mode::kGlobal;
  int64_t mode_step = 0;
  std::vector<PreparedValue> values;
  std::string event_file;      // the raw values' event file, relative to the trial root
  bool left_out = false;       // the selection left some of the file's values out
  std::vector<Status> errors;  // each names the index file and the step
  uint64_t bytes = 0;          // index and event bytes read
  uint64_t reserved = 0;       // share of the read-ahead budget, released once written
  // The event bytes, read or mapped, while blobs built in place in them wait to be stored.
  std::unique_ptr<ReadBuffer> span;
  std::unique_ptr<MappedRange> mapped_span;
  std::string mapped_file;  // the event file mapped_span is of
};

}  // namespace trialdb
