// Event encoding for the writer. See event_encoder.h; field numbers are those of
// ingest/format/proto/smdebug_event.proto.
#include "ingest/format/event_encoder.h"

#include <cstring>

#include "ingest/format/proto/smdebug_event.pb.h"

namespace trialdb {

namespace {

// Protobuf wire types.
constexpr int kWireVarint = 0;
constexpr int kWireFixed64 = 1;
constexpr int kWireLengthDelimited = 2;

// Field numbers along the path Event.summary.value.tensor.tensor_content.
constexpr int kEventWallTime = 1;  // double
constexpr int kEventStep = 2;      // int64
constexpr int kEventSummary = 5;   // Summary
constexpr int kSummaryValue = 1;   // repeated Value
constexpr int kValueTag = 1;       // string
constexpr int kValueTensor = 8;    // TensorProto
constexpr int kValueMetadata = 9;  // SummaryMetadata
constexpr int kTensorDtype = 1;    // int32
constexpr int kTensorShape = 2;    // TensorShapeProto
constexpr int kTensorContent = 4;  // bytes
constexpr int kShapeDim = 2;       // repeated Dim
constexpr int kDimSize = 1;        // int64
constexpr int kDimName = 2;        // string

// Every field above is numbered below 16, so each key is one byte.
constexpr size_t kKeyBytes = 1;
constexpr int kVarintPayloadBits = 7;
constexpr uint64_t kVarintContinuation = 0x80;

size_t varint_size(uint64_t v) {
  size_t n = 1;
  for (; v >= kVarintContinuation; v >>= kVarintPayloadBits) ++n;
  return n;
}

void put_varint(std::string* out, uint64_t v) {
  for (; v >= kVarintContinuation; v >>= kVarintPayloadBits) out->push_back(static_cast<char>(v | kVarintContinuation));
  out->push_back(static_cast<char>(v));
}

void put_key(std::string* out, int field, int wire_type) {
  put_varint(out, (static_cast<uint64_t>(field) << 3) | wire_type);
}

// Negative int32 and int64 values are varints of their 64-bit two's complement, as protobuf
// writes them.
uint64_t varint_bits(int64_t v) { return static_cast<uint64_t>(v); }

// Encoded size of a varint field, and of a length-delimited field with `payload` bytes.
size_t varint_field_size(int64_t v) { return kKeyBytes + varint_size(varint_bits(v)); }
size_t delimited_field_size(size_t payload) { return kKeyBytes + varint_size(payload) + payload; }

void put_varint_field(std::string* out, int field, int64_t v) {
  put_key(out, field, kWireVarint);
  put_varint(out, varint_bits(v));
}

// The key and length of a length-delimited field; its payload follows.
void put_delimited_header(std::string* out, int field, size_t payload) {
  put_key(out, field, kWireLengthDelimited);
  put_varint(out, payload);
}

void put_delimited_field(std::string* out, int field, std::string_view payload) {
  put_delimited_header(out, field, payload.size());
  out->append(payload);
}

void put_double_field(std::string* out, int field, double v) {
  put_key(out, field, kWireFixed64);
  char bytes[sizeof v];
  std::memcpy(bytes, &v, sizeof v);
  out->append(bytes, sizeof v);
}

// smdebug names each dimension after its tensor and size.
std::string dim_name(std::string_view tag, int64_t size) { return std::string(tag) + "_" + std::to_string(size); }

// TensorShapeProto: one Dim {size, name} per axis. proto3 leaves out a zero size.
std::string encode_shape(std::string_view tag, std::span<const int64_t> shape) {
  std::string out;
  for (int64_t size : shape) {
    const std::string name = dim_name(tag, size);
    const size_t dim_bytes = (size != 0 ? varint_field_size(size) : 0) + delimited_field_size(name.size());
    put_delimited_header(&out, kShapeDim, dim_bytes);
    if (size != 0) put_varint_field(&out, kDimSize, size);
    put_delimited_field(&out, kDimName, name);
  }
  return out;
}

// The generated serializer leaves out a double whose bits are all zero (+0.0, not -0.0).
bool is_default_double(double v) {
  uint64_t bits;
  std::memcpy(&bits, &v, sizeof v);
  return bits == 0;
}

}  // namespace

int tf_dtype_number(DType t) {
  TfDataType number = TfDataType::kInvalid;
  switch (t) {
    case DType::Float32: number = TfDataType::kFloat; break;
    case DType::Float64: number = TfDataType::kDouble; break;
    case DType::Int32: number = TfDataType::kInt32; break;
    case DType::UInt8: number = TfDataType::kUInt8; break;
    case DType::Int16: number = TfDataType::kInt16; break;
    case DType::Int8: number = TfDataType::kInt8; break;
    case DType::String: number = TfDataType::kInvalid; break;  // smdebug leaves it unset
    case DType::Complex64: number = TfDataType::kComplex64; break;
    case DType::Int64: number = TfDataType::kInt64; break;
    case DType::Bool: number = TfDataType::kBool; break;
    case DType::BFloat16: number = TfDataType::kBFloat16; break;
    case DType::UInt16: number = TfDataType::kUInt16; break;
    case DType::Complex128: number = TfDataType::kComplex128; break;
    case DType::Float16: number = TfDataType::kHalf; break;
    case DType::UInt32: number = TfDataType::kUInt32; break;
    case DType::UInt64: number = TfDataType::kUInt64; break;
  }
  return static_cast<int>(number);
}

std::string encode_mode_plugin_metadata(Mode mode, int64_t mode_step) {
  pb::SummaryMetadata metadata;
  auto* step_entry = metadata.add_plugin_data();
  step_entry->set_plugin_name("mode_step");
  step_entry->set_content(std::to_string(mode_step));
  auto* mode_entry = metadata.add_plugin_data();
  mode_entry->set_plugin_name("mode");
  mode_entry->set_content(std::to_string(static_cast<int>(mode)));
  return metadata.SerializeAsString();
}

void encode_tensor_content_event(const TensorEvent& event, int tf_dtype, size_t content_bytes,
                                 TensorContentFrame* frame) {
  const std::string shape = encode_shape(event.tag, event.shape);
  // Sizes from the inside out; proto3 leaves out zero numbers and empty strings and bytes.
  const size_t tensor_bytes = (tf_dtype != 0 ? varint_field_size(tf_dtype) : 0) + delimited_field_size(shape.size()) +
                              (content_bytes != 0 ? delimited_field_size(content_bytes) : 0);
  const size_t value_bytes = (event.tag.empty() ? 0 : delimited_field_size(event.tag.size())) +
                             delimited_field_size(tensor_bytes) + delimited_field_size(event.plugin_metadata.size());
  const size_t summary_bytes = delimited_field_size(value_bytes);

  std::string& head = frame->head;
  head.clear();
  if (!is_default_double(event.wall_time)) put_double_field(&head, kEventWallTime, event.wall_time);
  if (event.step != 0) put_varint_field(&head, kEventStep, event.step);
  put_delimited_header(&head, kEventSummary, summary_bytes);
  put_delimited_header(&head, kSummaryValue, value_bytes);
  if (!event.tag.empty()) put_delimited_field(&head, kValueTag, event.tag);
  put_delimited_header(&head, kValueTensor, tensor_bytes);
  if (tf_dtype != 0) put_varint_field(&head, kTensorDtype, tf_dtype);
  put_delimited_field(&head, kTensorShape, shape);
  if (content_bytes != 0) put_delimited_header(&head, kTensorContent, content_bytes);  // the content follows

  frame->trailer.clear();
  put_delimited_field(&frame->trailer, kValueMetadata, event.plugin_metadata);
}

std::string encode_string_tensor_event(const TensorEvent& event, const std::vector<std::string>& values) {
  pb::Event ev;
  ev.set_wall_time(event.wall_time);
  ev.set_step(event.step);
  auto* value = ev.mutable_summary()->add_value();
  value->set_tag(std::string(event.tag));
  auto* tensor = value->mutable_tensor();
  auto* shape = tensor->mutable_tensor_shape();
  for (int64_t size : event.shape) {
    auto* dim = shape->add_dim();
    dim->set_size(size);
    dim->set_name(dim_name(event.tag, size));
  }
  for (const auto& s : values) tensor->add_string_val(s);
  value->mutable_metadata()->ParseFromString(std::string(event.plugin_metadata));
  return ev.SerializeAsString();
}

std::string encode_file_version_event(double wall_time) {
  pb::Event ev;
  ev.set_wall_time(wall_time);
  ev.set_file_version(std::string(kEventFileVersion));
  return ev.SerializeAsString();
}

}  // namespace trialdb
