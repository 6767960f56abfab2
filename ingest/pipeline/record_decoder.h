// One index entry's record, checked, decoded, reduced and encoded as a value blob: the
// per-record work of preparing a file, free of shared state so that the records of one large
// event file can be decoded on several threads.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "ingest/format/event_decoder.h"
#include "ingest/format/index_file.h"
#include "ingest/pipeline/prepared_file.h"
#include "kernels/distribution.h"
#include "kernels/reductions.h"

namespace trialdb {

struct DecodedRecord {
  bool invalid_entry = false;  // the entry's length is impossible (reported when the index was read)
  std::string error;           // non-empty: the record is unusable, and why
  // A saved reduction ("smdebug/reductions/<reduction>/<tensor>"): its tensor and value.
  bool is_reduction = false;
  std::string reduced_tensor;
  int reduction_bit = 0;  // ReductionIndex, + kRedCount for a reduction of |x|
  double reduction_value = 0;
  // A raw value: dtype, dims, and its bytes until encode_record turns them into the blob.
  DecodedTensor tensor;
  int64_t numel = 0;
  bool has_reductions = false;
  Reductions reductions;
  bool has_distribution = false;  // numeric: its distribution (kernels/distribution.h)
  Distribution distribution;
  bool too_large = false;  // over SQLite's length limit: `notice` says so, no blob
  std::string notice;
  ValueBlob blob;
};

// Decodes the record of `entry` from `span`, the event file `event_file`'s bytes from offset
// `span_offset`. The record must be the one the entry names: its tag the entry's name (or, for a
// saved reduction, the name of the tensor reduced) and its event step `step`, the index file's;
// otherwise it is an error and nothing of it is kept (so an index that points many entries into
// one record costs one decoded value, not one per entry). Values whose blob would exceed
// `max_blob_bytes` keep only what describes them.
// kSkip: the value's reductions and distribution are stored already (ingest --values all adds
// only the bytes), so they are not computed again. kComputeButScalarDistribution: as kCompute,
// except that a one-element value smdebug can read gets no distribution: its reductions are
// stored as its element (ReductionSource::kScalarElement), from which the views derive its
// distribution, unless the hook saved reductions for it (tensors_with_saved_reductions).
enum class RecordStatistics { kCompute, kComputeButScalarDistribution, kSkip };
DecodedRecord decode_record(const IndexEntry& entry, int64_t step, std::string_view span, uint64_t span_offset,
                            const std::string& event_file, uint64_t max_blob_bytes,
                            RecordStatistics statistics = RecordStatistics::kCompute);

// Turns a decoded raw value into its blob and releases the decoded bytes. A tensor's bytes are a
// view into the span (decode_record borrows them); uncompressed, its blob is built in place: the
// blob header is written over the bytes just before them in the same record (its framing and the
// event's other fields, all decoded by now), so the tensor is never copied between the file and
// SQLite's pages. That needs `in_place` (no other entry's record overlaps this one, and the caller
// allows it) and room in the record; otherwise the blob is a copy.
void encode_record(DecodedRecord& d, bool compress, char* span, size_t record_start, bool in_place);

// Instead of encode_record, for ingest --values none: the blob is the header alone, flagged as
// holding no bytes (schema/value_blob.h), and the decoded bytes are released.
void encode_header_only(DecodedRecord& d);

// The tensor an index entry's value belongs to: its name, or for a saved reduction
// ("smdebug/reductions/<reduction>/<tensor>") the tensor reduced.
std::string_view value_tensor_of(const std::string& entry_name);

// The tensors the hook saved reductions for among `entries` (views of the entries' names): the
// one-element values that need their distribution (RecordStatistics), as their reductions are
// stored as columns.
std::unordered_set<std::string_view> tensors_with_saved_reductions(const std::vector<IndexEntry>& entries);

// Whether the valid entries' records are disjoint, so blobs may be built in place in them (a
// damaged index may point two entries into one record).
bool records_disjoint(const std::vector<IndexEntry>& entries);

// Whether an entry's (start, length) can describe a record at all.
bool entry_length_valid(const IndexEntry& e);

}  // namespace trialdb
