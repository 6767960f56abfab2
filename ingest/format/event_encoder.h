// Encodes the Events smdebug writes (ingest/format/proto/smdebug_event.proto), the writer's
// counterpart of event_decoder.h.
//
// A numeric tensor's Event is encoded by hand around its tensor_content, as a head and a
// trailer, so the tensor's bytes can go from the caller's buffer straight to the file instead
// of being copied into a protobuf message. The bytes are exactly those of the generated
// serializer; the other Events (strings, file_version) are rare and use it directly.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ingest/format/event_decoder.h"
#include "schema/value_blob.h"

namespace trialdb {

// TensorFlow's DataType numbers (tensorflow/core/framework/types.proto) for the dtypes this
// project writes: the value of TensorProto.dtype.
enum class TfDataType : int {
  kInvalid = 0,  // smdebug leaves dtype unset for string tensors
  kFloat = 1,
  kDouble = 2,
  kInt32 = 3,
  kUInt8 = 4,
  kInt16 = 5,
  kInt8 = 6,
  kString = 7,
  kComplex64 = 8,
  kInt64 = 9,
  kBool = 10,
  kBFloat16 = 14,
  kUInt16 = 17,
  kComplex128 = 18,
  kHalf = 19,
  kUInt32 = 22,
  kUInt64 = 23,
};

// The TensorProto.dtype smdebug writes for a dtype (0 for strings).
int tf_dtype_number(DType t);

// The serialized SummaryMetadata smdebug attaches to every tensor: two plugin_data entries,
// "mode_step" then "mode", each with its number as decimal text.
std::string encode_mode_plugin_metadata(Mode mode, int64_t mode_step);

// One tensor's Event: Summary.Value {tag, tensor, metadata} at the given wall time and step.
struct TensorEvent {
  double wall_time = 0;
  int64_t step = 0;
  std::string_view tag;
  std::span<const int64_t> shape;    // one Dim {size, name "<tag>_<size>"} per axis
  std::string_view plugin_metadata;  // a serialized SummaryMetadata, always written
};

// The Event of a numeric tensor without its tensor_content: the record's payload is
// head | content_bytes bytes of tensor_content | trailer (Value.metadata, field 9, comes after
// the tensor, field 8). The strings are cleared first, so one frame can be reused.
struct TensorContentFrame {
  std::string head, trailer;
};
void encode_tensor_content_event(const TensorEvent& event, int tf_dtype, size_t content_bytes,
                                 TensorContentFrame* frame);

// The Event of a string tensor: dtype unset, one string_val per element.
std::string encode_string_tensor_event(const TensorEvent& event, const std::vector<std::string>& values);

// The Event TensorFlow writers put first in a file: only wall_time and file_version.
inline constexpr std::string_view kEventFileVersion = "brain.Event:2";
std::string encode_file_version_event(double wall_time);

}  // namespace trialdb
