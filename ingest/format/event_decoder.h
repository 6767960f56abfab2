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
  bool has_mode = false;       // plugin_data carried mode/mode_step
  Mode mode = Mode::kGlobal;
  int64_t mode_step = 0;
  DType dtype = DType::Float32;
  // smdebug's reader can decode this dtype (others raise KeyError there): parity decides
  // whether reductions are offered, see Ingester.
  bool smdebug_readable = true;
  std::vector<int64_t> dims;
  std::string data;            // C-order little-endian bytes; strings: u32 length + bytes each
  // Set instead of data when the tensor_content was left in the payload (see decode_event's
  // borrow_from_bytes); valid as long as the payload is.
  std::string_view borrowed;
  bool is_borrowed = false;

  std::string_view bytes() const { return is_borrowed ? borrowed : std::string_view(data); }
};

// Appends the tensors of one Event payload. Events without a summary (file_version) add
// nothing. A malformed payload is kInvalidInput, its cause naming the tensor when one is at
// fault; the caller adds the file and step (Status::at). Thread-safe: small records are parsed
// on a per-thread protobuf arena; nothing in *out refers to it.
// In payloads of at least borrow_from_bytes, tensor_content is not copied: the tensor is
// `borrowed` from the payload (tensor_content_split.h). Either way the tensors are the same.
Status decode_event(std::string_view payload, std::vector<DecodedTensor>* out, size_t borrow_from_bytes = SIZE_MAX);

// TensorFlow DataType number -> our dtype (smdebug's reading of it). false when unknown.
bool dtype_from_tf(int tf_dtype, DType* out, bool* smdebug_readable);

}  // namespace trialdb
