// Decodes one TFRecord payload (an Event proto) into the tensors it carries.
//
// Handles every TensorFlow dtype docs/FORMAT.md lists, tensor_content and the typed *_val forms
// (a single value broadcast over the shape, fewer values padded with the last, as TensorFlow
// does), strings (dtype 0 + string_val), 0-d and empty tensors, and smdebug's repeated
// plugin_data carrying mode and mode_step.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "schema/status.h"
#include "schema/value_blob.h"

namespace trialdb {

enum class Mode : int { kTrain = 1, kEval = 2, kPredict = 3, kGlobal = 4 };
const char* mode_name(Mode m);
bool parse_mode(std::string_view name, Mode* out);

struct DecodedTensor {
  std::string tag;
  int64_t event_step = 0;
  bool has_mode = false;  // plugin_data carried mode/mode_step
  Mode mode = Mode::kGlobal;
  int64_t mode_step = 0;
  DType dtype = DType::Float32;
  // smdebug's reader can decode this dtype (others raise KeyError there): parity decides
  // whether reductions are offered, see Ingester.
  bool smdebug_readable = true;
  std::vector<int64_t> dims;
  std::string data;  // C-order little-endian bytes; strings: u32 length + bytes each
  // Set instead of data when the tensor_content was left in the payload (see decode_event's
  // borrow_from_bytes); valid as long as the payload is.
  std::string_view borrowed;
  bool is_borrowed = false;

  std::string_view bytes() const { return is_borrowed ? borrowed : std::string_view(data); }
};

// Appends the tensors of one Event payload: the Events smdebug writes are read by hand
// (event_wire_decoder.h), anything else by libprotobuf, with the same result either way.
// Events without a summary (file_version) add nothing. A malformed payload is kInvalidInput,
// its cause naming the tensor when one is at fault; the caller adds the file and step
// (Status::at). Thread-safe: small records are parsed on a per-thread protobuf arena; nothing
// in *out refers to it.
// In payloads of at least borrow_from_bytes, tensor_content is not copied: the tensor is
// `borrowed` from the payload (tensor_content_split.h). Either way the tensors are the same.
// Typed values that TensorFlow broadcasts or pads (one float_val over a shape of 10^9) grow from
// a few bytes to whatever the shape says: the elements so added may take at most
// max_growth_bytes (and never more than kMaxExpandedBytes); beyond that the tensor is
// kInvalidInput, before anything is allocated for it.
Status decode_event(std::string_view payload, std::vector<DecodedTensor>* out, size_t borrow_from_bytes = SIZE_MAX,
                    uint64_t max_growth_bytes = UINT64_MAX);

// decode_event without its hand-written path (event_wire_decoder.h): every payload parsed by
// libprotobuf. The reference that path is held to (tests, the event fuzz target).
Status decode_event_with_protobuf(std::string_view payload, std::vector<DecodedTensor>* out,
                                  size_t borrow_from_bytes = SIZE_MAX, uint64_t max_growth_bytes = UINT64_MAX);

// What one SummaryMetadata.plugin_data entry says of its tensor: smdebug's "mode" (1-4) and
// "mode_step", each a decimal number read as strtoll(content, &end, 10) consuming all of it.
void apply_plugin_data(std::string_view plugin_name, std::string_view content, DecodedTensor* d);

// Whether tensor_content of content_bytes holds exactly numel elements of item_bytes.
bool content_fills_shape(size_t content_bytes, size_t item_bytes, int64_t numel);

// The most one tensor's broadcast or padded typed values may expand to. Real writers send large
// values as tensor_content, whose size the record itself bounds.
inline constexpr uint64_t kMaxExpandedBytes = 256u << 20;

// What a file's broadcasts may add, all together, beyond its event bytes: a small value
// broadcast from a tiny file still decodes.
inline constexpr uint64_t kGrowthFloorBytes = 1u << 20;

// One record's share of what its file's broadcasts may add (for decode_event's
// max_growth_bytes): the file may grow by its own size plus kGrowthFloorBytes, split in
// proportion to the records' sizes. A per-record share keeps the bound independent of the order
// in which threads decode the records, so the same file always gets the same errors; and since
// the ingest holds a file's event bytes within its read-ahead budget, what the file's values
// decode to stays within twice that.
uint64_t record_growth_share(uint64_t record_bytes, uint64_t file_bytes);

// TensorFlow DataType number -> our dtype (smdebug's reading of it). false when unknown.
bool dtype_from_tf(int tf_dtype, DType* out, bool* smdebug_readable);

}  // namespace trialdb
