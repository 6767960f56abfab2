// Cuts the tensor_content bytes out of an Event payload, so that a large tensor is not copied
// into a protobuf string on its way to its blob (the ingester then builds the blob around the
// bytes where they lie in the event file's span: no copy at all).
//
// libprotobuf always copies a bytes field out of its input. split_tensor_content() walks the
// wire format along Event.summary (5) -> Summary.value (1) -> Value.tensor (8) ->
// TensorProto.tensor_content (4), returns views of the contents, and writes the payload
// without them (the enclosing lengths re-encoded). libprotobuf then parses that as usual: it
// is the metadata only, a few hundred bytes, and means exactly what the payload means apart
// from the cut fields.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace trialdb {

// *contents gets one entry per Summary.Value, in order: its tensor_content, empty when it has
// none. Returns false, and the caller parses the payload as it is, when there is nothing to
// cut or the layout is not the one writers produce (a singular field repeated, which libprotobuf
// would merge; a path field that is not length-delimited; groups; malformed wire data).
bool split_tensor_content(std::string_view event, std::string* stripped, std::vector<std::string_view>* contents);

}  // namespace trialdb
