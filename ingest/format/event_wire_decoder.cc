#include "ingest/format/event_wire_decoder.h"

#include <climits>
#include <cstdint>

namespace trialdb {

namespace {

enum WireType : uint32_t { kVarint = 0, kFixed64 = 1, kLengthDelimited = 2 };

// The field numbers read (ingest/format/proto/smdebug_event.proto).
enum EventField : uint32_t { kWallTime = 1, kStep = 2, kSummary = 5 };
enum SummaryField : uint32_t { kValue = 1 };
enum ValueField : uint32_t { kTag = 1, kTensor = 8, kMetadata = 9 };
enum MetadataField : uint32_t { kPluginData = 1 };
enum PluginDataField : uint32_t { kPluginName = 1, kContent = 2 };
enum TensorField : uint32_t { kDtype = 1, kTensorShape = 2, kTensorContent = 4 };
enum ShapeField : uint32_t { kDim = 2 };
enum DimField : uint32_t { kDimSize = 1, kDimName = 2 };

constexpr int kMaxKeyBytes = 5;      // libprotobuf reads a tag in at most 5 bytes
constexpr int kMaxLengthBytes = 5;   // and a length likewise (below 2^31)
constexpr int kMaxVarintBytes = 10;  // a 64-bit value

constexpr uint32_t key_of(uint32_t field, WireType type) { return field << 3 | type; }

// One message's fields in order. Every read fails (returns false) rather than guess.
class Fields {
 public:
  explicit Fields(std::string_view msg) : p_(reinterpret_cast<const uint8_t*>(msg.data())), end_(p_ + msg.size()) {}

  bool done() const { return p_ == end_; }

  bool key(uint32_t* key) {
    uint64_t v;
    if (!varint(kMaxKeyBytes, &v) || v > UINT32_MAX) return false;
    *key = static_cast<uint32_t>(v);
    return true;
  }

  // A 64-bit varint whose tenth byte, if any, holds only bit 63: nothing for libprotobuf to drop.
  bool value(uint64_t* v) {
    const uint8_t* start = p_;
    if (!varint(kMaxVarintBytes, v)) return false;
    return p_ - start < kMaxVarintBytes || p_[-1] <= 1;
  }

  bool bytes(std::string_view* out) {
    uint64_t n;
    if (!varint(kMaxLengthBytes, &n) || n > static_cast<uint64_t>(end_ - p_)) return false;
    *out = std::string_view(reinterpret_cast<const char*>(p_), n);
    p_ += n;
    return true;
  }

  bool skip_fixed64() {
    if (end_ - p_ < 8) return false;
    p_ += 8;
    return true;
  }

 private:
  bool varint(int max_bytes, uint64_t* v) {
    uint64_t r = 0;
    for (int i = 0; i < max_bytes && p_ < end_; ++i) {
      const uint8_t b = *p_++;
      r |= static_cast<uint64_t>(b & 0x7f) << (7 * i);
      if (!(b & 0x80)) {
        *v = r;
        return true;
      }
    }
    return false;
  }

  const uint8_t* p_;
  const uint8_t* end_;
};

// A singular field seen once more: libprotobuf would merge or override, so not this path's case.
bool first_time(uint32_t* seen, uint32_t field) {
  const uint32_t bit = 1u << field;
  if (*seen & bit) return false;
  *seen |= bit;
  return true;
}

// libprotobuf checks the UTF-8 of string fields; ASCII needs no checking.
bool ascii(std::string_view s) {
  unsigned char any = 0;
  for (char c : s) any |= static_cast<unsigned char>(c);
  return any < 0x80;
}

bool read_plugin_data(std::string_view msg, DecodedTensor* d) {
  std::string_view name, content;
  uint32_t seen = 0, key;
  for (Fields f(msg); !f.done();) {
    if (!f.key(&key)) return false;
    if (key == key_of(kPluginName, kLengthDelimited) && first_time(&seen, kPluginName)) {
      if (!f.bytes(&name) || !ascii(name)) return false;
    } else if (key == key_of(kContent, kLengthDelimited) && first_time(&seen, kContent)) {
      if (!f.bytes(&content)) return false;
    } else {
      return false;
    }
  }
  apply_plugin_data(name, content, d);
  return true;
}

bool read_metadata(std::string_view msg, DecodedTensor* d) {
  uint32_t key;
  std::string_view entry;
  for (Fields f(msg); !f.done();)
    if (!f.key(&key) || key != key_of(kPluginData, kLengthDelimited) || !f.bytes(&entry) || !read_plugin_data(entry, d))
      return false;
  return true;
}

bool read_dim(std::string_view msg, DecodedTensor* d) {
  uint64_t size = 0;
  uint32_t seen = 0, key;
  std::string_view name;
  for (Fields f(msg); !f.done();) {
    if (!f.key(&key)) return false;
    if (key == key_of(kDimSize, kVarint) && first_time(&seen, kDimSize)) {
      if (!f.value(&size)) return false;
    } else if (key == key_of(kDimName, kLengthDelimited) && first_time(&seen, kDimName)) {
      if (!f.bytes(&name) || !ascii(name)) return false;
    } else {
      return false;
    }
  }
  if (static_cast<int64_t>(size) < 0 || d->dims.size() == kMaxDims) return false;
  d->dims.push_back(static_cast<int64_t>(size));
  return true;
}

bool read_shape(std::string_view msg, DecodedTensor* d) {
  uint32_t key;
  std::string_view dim;
  for (Fields f(msg); !f.done();)
    if (!f.key(&key) || key != key_of(kDim, kLengthDelimited) || !f.bytes(&dim) || !read_dim(dim, d)) return false;
  return true;
}

bool read_tensor(std::string_view msg, bool borrow, DecodedTensor* d) {
  uint64_t tf_dtype = 0;
  std::string_view content;
  uint32_t seen = 0, key;
  for (Fields f(msg); !f.done();) {
    if (!f.key(&key)) return false;
    if (key == key_of(kDtype, kVarint) && first_time(&seen, kDtype)) {
      if (!f.value(&tf_dtype)) return false;
    } else if (key == key_of(kTensorShape, kLengthDelimited) && first_time(&seen, kTensorShape)) {
      std::string_view shape;
      if (!f.bytes(&shape) || !read_shape(shape, d)) return false;
    } else if (key == key_of(kTensorContent, kLengthDelimited) && first_time(&seen, kTensorContent)) {
      if (!f.bytes(&content)) return false;
    } else {
      return false;
    }
  }
  if (tf_dtype > INT_MAX || !dtype_from_tf(static_cast<int>(tf_dtype), &d->dtype, &d->smdebug_readable) ||
      d->dtype == DType::String)
    return false;
  const int64_t numel = shape_numel(d->dims.data(), static_cast<int>(d->dims.size()));
  // Without content only an empty tensor is whole; the rest would be typed values.
  if (numel < 0 || (content.empty() && numel != 0) || !content_fills_shape(content.size(), dtype_size(d->dtype), numel))
    return false;
  if (content.empty()) return true;
  if (borrow) {
    d->borrowed = content;
    d->is_borrowed = true;
  } else {
    d->data.assign(content);
  }
  return true;
}

bool read_value(std::string_view msg, int64_t step, bool borrow, DecodedTensor* d) {
  d->event_step = d->mode_step = step;
  // Read in the order libprotobuf's result is used: plugin data, then the tensor.
  std::string_view tag, tensor, metadata;
  uint32_t seen = 0, key;
  for (Fields f(msg); !f.done();) {
    if (!f.key(&key)) return false;
    if (key == key_of(kTag, kLengthDelimited) && first_time(&seen, kTag)) {
      if (!f.bytes(&tag) || !ascii(tag)) return false;
    } else if (key == key_of(kTensor, kLengthDelimited) && first_time(&seen, kTensor)) {
      if (!f.bytes(&tensor)) return false;
    } else if (key == key_of(kMetadata, kLengthDelimited) && first_time(&seen, kMetadata)) {
      if (!f.bytes(&metadata)) return false;
    } else {
      return false;
    }
  }
  if (!(seen & 1u << kTensor)) return false;  // a TensorBoard scalar or a histogram
  d->tag.assign(tag);
  return read_metadata(metadata, d) && read_tensor(tensor, borrow, d);
}

}  // namespace

bool decode_smdebug_event(std::string_view payload, size_t borrow_from_bytes, std::vector<DecodedTensor>* out) {
  if (payload.size() > INT_MAX) return false;  // libprotobuf's limit
  uint64_t step = 0;
  std::string_view summary;
  uint32_t seen = 0, key;
  for (Fields f(payload); !f.done();) {
    if (!f.key(&key)) return false;
    if (key == key_of(kWallTime, kFixed64) && first_time(&seen, kWallTime)) {
      if (!f.skip_fixed64()) return false;
    } else if (key == key_of(kStep, kVarint) && first_time(&seen, kStep)) {
      if (!f.value(&step)) return false;
    } else if (key == key_of(kSummary, kLengthDelimited) && first_time(&seen, kSummary)) {
      if (!f.bytes(&summary)) return false;
    } else {
      return false;
    }
  }
  // The protobuf path borrows every non-empty content of a payload this large: the layouts read
  // here are all ones split_tensor_content() cuts.
  const bool borrow = payload.size() >= borrow_from_bytes;
  const size_t had = out->size();
  std::string_view value;
  for (Fields f(summary); !f.done();) {
    if (!f.key(&key) || key != key_of(kValue, kLengthDelimited) || !f.bytes(&value) ||
        !read_value(value, static_cast<int64_t>(step), borrow, &out->emplace_back())) {
      out->resize(had);
      return false;
    }
  }
  return true;
}

}  // namespace trialdb
