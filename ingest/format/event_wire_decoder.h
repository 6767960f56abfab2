// The hand-written path of decode_event: the Events smdebug writes, read straight off the wire.
//
// libprotobuf builds a dozen objects per record (Event, Summary, Value, TensorProto, shape,
// dims, metadata, plugin data) to hand over a few fields; for scalars that was a fifth of the
// ingest's instructions. This reads exactly the shape smdebug writes: Event {wall_time, step,
// summary}, Summary {value...}, Value {tag, tensor, metadata}, TensorProto {dtype, tensor_shape,
// tensor_content}, TensorShapeProto {dim...}, Dim {size, name}, SummaryMetadata {plugin_data...},
// PluginData {plugin_name, content}. Anything else is left to libprotobuf: another field, a field
// with another wire type, a singular field given twice (libprotobuf's last-wins and merge rules),
// text that is not ASCII (libprotobuf checks the UTF-8 of string fields), a varint or length in
// a form libprotobuf might read differently, typed *_val values, strings, a tensor without
// content or with content that does not fit its dtype and shape, and every malformed payload.
// What it accepts it decodes exactly as decode_event_with_protobuf does (tests/ingest/format and
// the event fuzz target hold it to that).
#pragma once
#include <cstddef>
#include <string_view>
#include <vector>

#include "ingest/format/event_decoder.h"

namespace trialdb {

// Appends the tensors of payload and returns true, or returns false with *out as it was.
// borrow_from_bytes as in decode_event.
bool decode_smdebug_event(std::string_view payload, size_t borrow_from_bytes, std::vector<DecodedTensor>* out);

}  // namespace trialdb
