#include "ingest/format/event_decoder.h"

#include <algorithm>
#include <climits>
#include <cstring>
#include <memory>

#include <google/protobuf/arena.h>

#include "ingest/format/proto/smdebug_event.pb.h"
#include "ingest/format/event_wire_decoder.h"
#include "ingest/format/tensor_content_split.h"

namespace trialdb {

const char* mode_name(Mode m) {
  switch (m) {
    case Mode::kTrain: return "TRAIN";
    case Mode::kEval: return "EVAL";
    case Mode::kPredict: return "PREDICT";
    default: return "GLOBAL";
  }
}

bool parse_mode(std::string_view name, Mode* out) {
  if (name == "TRAIN") *out = Mode::kTrain;
  else if (name == "EVAL") *out = Mode::kEval;
  else if (name == "PREDICT") *out = Mode::kPredict;
  else if (name == "GLOBAL") *out = Mode::kGlobal;
  else return false;
  return true;
}

bool dtype_from_tf(int tf, DType* out, bool* readable) {
  // smdebug reads HALF, FLOAT, DOUBLE, INT8 (as uint8!), INT32, INT64, STRING, BOOL, UINT8 and
  // COMPLEX128; every other dtype raises KeyError in its reader.
  *readable = false;
  switch (tf) {
    case 1:
      *out = DType::Float32;
      *readable = true;
      return true;
    case 2:
      *out = DType::Float64;
      *readable = true;
      return true;
    case 3:
      *out = DType::Int32;
      *readable = true;
      return true;
    case 4:
      *out = DType::UInt8;
      *readable = true;
      return true;
    case 5: *out = DType::Int16; return true;
    case 6:
      *out = DType::UInt8;
      *readable = true;
      return true;  // smdebug maps DT_INT8 to uint8
    case 7:
      *out = DType::String;
      *readable = true;
      return true;
    case 8: *out = DType::Complex64; return true;
    case 9:
      *out = DType::Int64;
      *readable = true;
      return true;
    case 10:
      *out = DType::Bool;
      *readable = true;
      return true;
    case 11: *out = DType::Int8; return true;   // QINT8
    case 12: *out = DType::UInt8; return true;  // QUINT8
    case 13: *out = DType::Int32; return true;  // QINT32
    case 14: *out = DType::BFloat16; return true;
    case 15: *out = DType::Int16; return true;   // QINT16
    case 16: *out = DType::UInt16; return true;  // QUINT16
    case 17: *out = DType::UInt16; return true;
    case 18:
      *out = DType::Complex128;
      *readable = true;
      return true;
    case 19:
      *out = DType::Float16;
      *readable = true;
      return true;
    case 22: *out = DType::UInt32; return true;
    case 23: *out = DType::UInt64; return true;
    default: return false;
  }
}

namespace {

// The message of a tensor whose broadcast or padding would grow past what it may.
Status too_much_growth(const char* what, int64_t numel, uint64_t growth, uint64_t max_growth) {
  return Status::invalid(std::string(what) + " would expand to a shape of " + std::to_string(numel) +
                         " elements, adding " + std::to_string(growth) + " bytes beyond the values written; at most " +
                         std::to_string(max_growth) + " may be added here (the record's share of the ingest's memory)");
}

// Whether elements added by broadcast or padding (`added` of them, `item` bytes each) stay
// within max_growth and kMaxExpandedBytes; the division keeps a forged shape from wrapping.
bool growth_fits(uint64_t added, uint64_t item, uint64_t max_growth) {
  const uint64_t cap = std::min(max_growth, kMaxExpandedBytes);
  return added <= cap / item;
}

// Fills `numel` elements of type T from a repeated field, TensorFlow style: none -> zeros,
// one -> broadcast, fewer -> padded with the last, more -> error. Only the listed values are
// converted one by one (the record bounds them); the padding, which a forged shape can make
// 256 MiB, is copied from itself in doubling blocks.
template <class T, class Field>
Status fill_typed(const Field& field, int64_t numel, std::string* data) {
  const int64_t have = field.size();
  if (have > numel)
    return Status::invalid("typed value list has " + std::to_string(have) + " elements for a shape of " +
                           std::to_string(numel));
  data->resize(static_cast<size_t>(numel) * sizeof(T));  // zeros: what an empty list means
  char* dst = data->data();
  for (int64_t i = 0; i < have; ++i) {
    const T v = static_cast<T>(field.Get(static_cast<int>(i)));
    std::memcpy(dst + static_cast<size_t>(i) * sizeof(T), &v, sizeof(T));
  }
  if (have == 0) return Status::ok();
  // [last, end) holds copies of the last value and doubles until it reaches the shape's end.
  const size_t last = static_cast<size_t>(have - 1) * sizeof(T);
  const size_t total = data->size();
  for (size_t end = last + sizeof(T); end < total;) {
    const size_t n = std::min(end - last, total - end);
    std::memcpy(dst + end, dst + last, n);
    end += n;
  }
  return Status::ok();
}

// How many typed values of `dtype` the TensorProto lists (the field fill_typed reads).
int typed_value_count(const pb::TensorProto& t, DType dtype) {
  switch (dtype) {
    case DType::Float32:
    case DType::Complex64: return t.float_val_size();
    case DType::Float64:
    case DType::Complex128: return t.double_val_size();
    case DType::Int64: return t.int64_val_size();
    case DType::Bool: return t.bool_val_size();
    case DType::Float16:
    case DType::BFloat16: return t.half_val_size();
    case DType::UInt32: return t.uint32_val_size();
    case DType::UInt64: return t.uint64_val_size();
    default: return t.int_val_size();
  }
}

// cut: the tensor_content split_tensor_content() cut out of the payload (t's is then empty),
// kept as a view; otherwise t's is taken by swap. Either way the content is not copied here.
Status decode_tensor(pb::TensorProto& t, const std::string_view* cut, uint64_t max_growth, DecodedTensor* d) {
  const std::string_view content = cut ? *cut : std::string_view(t.tensor_content());
  const auto& shape = t.tensor_shape();
  if (shape.unknown_rank()) return Status::invalid("tensor has unknown rank");
  if (shape.dim_size() > kMaxDims) return Status::invalid("tensor has more than 32 dimensions");
  for (const auto& dim : shape.dim()) {
    if (dim.size() < 0) return Status::invalid("tensor has a negative dimension");
    d->dims.push_back(dim.size());
  }
  int64_t numel = shape_numel(d->dims.data(), static_cast<int>(d->dims.size()));
  if (numel < 0) return Status::invalid("tensor shape overflows");

  if (t.dtype() == 0 || t.dtype() == 7) {
    if (t.dtype() == 0 && t.string_val_size() == 0 && !content.empty())
      return Status::invalid("tensor has dtype 0 (invalid) but numeric content");
    d->dtype = DType::String;
    d->smdebug_readable = true;
    if (t.string_val_size() != numel && !(t.string_val_size() == 1 && numel > 1)) {
      if (!(numel == 0 && t.string_val_size() == 0))
        return Status::invalid("string tensor has " + std::to_string(t.string_val_size()) + " values for a shape of " +
                               std::to_string(numel));
    }
    const uint64_t string_item = 4 + (t.string_val_size() == 1 ? t.string_val(0).size() : 0);
    if (t.string_val_size() == 1 && numel > 1 &&
        !growth_fits(static_cast<uint64_t>(numel) - 1, string_item, max_growth))
      return too_much_growth("one string value", numel, (static_cast<uint64_t>(numel) - 1) * string_item, max_growth);
    for (int64_t i = 0; i < numel; ++i) {
      const std::string& s = t.string_val(t.string_val_size() == 1 ? 0 : static_cast<int>(i));
      uint32_t len = static_cast<uint32_t>(s.size());
      d->data.append(reinterpret_cast<const char*>(&len), 4);
      d->data.append(s);
    }
    return Status::ok();
  }
  if (!dtype_from_tf(t.dtype(), &d->dtype, &d->smdebug_readable))
    return Status::invalid("unknown tensor dtype " + std::to_string(t.dtype()));
  const size_t item = dtype_size(d->dtype);
  if (!content.empty() || numel == 0) {
    if (!content_fills_shape(content.size(), item, numel))
      return Status::invalid(
          "tensor_content has " + std::to_string(content.size()) + " bytes but dtype " + dtype_name(d->dtype) +
          " x shape " + shape_json(d->dims.data(), static_cast<int>(d->dims.size())) + " needs " +
          (static_cast<uint64_t>(numel) > UINT64_MAX / item ? std::string("more than 2^64")
                                                            : std::to_string(static_cast<uint64_t>(numel) * item)));
    if (cut && !content.empty()) {
      d->borrowed = content;
      d->is_borrowed = true;
    } else {
      t.mutable_tensor_content()->swap(d->data);
    }
    return Status::ok();
  }
  // Complex values list two numbers per element; what is written needs no bound (the record
  // holds it), what is added does.
  const uint64_t listed = static_cast<uint64_t>(typed_value_count(t, d->dtype));
  const uint64_t per_element = d->dtype == DType::Complex64 || d->dtype == DType::Complex128 ? 2 : 1;
  const uint64_t written = listed / per_element;
  if (written < static_cast<uint64_t>(numel) &&
      !growth_fits(static_cast<uint64_t>(numel) - written, item, max_growth)) {
    const uint64_t added = static_cast<uint64_t>(numel) - written;
    return too_much_growth("typed values", numel, added > UINT64_MAX / item ? UINT64_MAX : added * item, max_growth);
  }
  switch (d->dtype) {
    case DType::Float32: return fill_typed<float>(t.float_val(), numel, &d->data);
    case DType::Float64: return fill_typed<double>(t.double_val(), numel, &d->data);
    case DType::Int32: return fill_typed<int32_t>(t.int_val(), numel, &d->data);
    case DType::Int16: return fill_typed<int16_t>(t.int_val(), numel, &d->data);
    case DType::Int8: return fill_typed<int8_t>(t.int_val(), numel, &d->data);
    case DType::UInt8: return fill_typed<uint8_t>(t.int_val(), numel, &d->data);
    case DType::UInt16: return fill_typed<uint16_t>(t.int_val(), numel, &d->data);
    case DType::Int64: return fill_typed<int64_t>(t.int64_val(), numel, &d->data);
    case DType::Bool: return fill_typed<uint8_t>(t.bool_val(), numel, &d->data);
    case DType::Float16:
    case DType::BFloat16: return fill_typed<uint16_t>(t.half_val(), numel, &d->data);
    case DType::UInt32: return fill_typed<uint32_t>(t.uint32_val(), numel, &d->data);
    case DType::UInt64: return fill_typed<uint64_t>(t.uint64_val(), numel, &d->data);
    case DType::Complex64: return fill_typed<float>(t.float_val(), numel * 2, &d->data);
    case DType::Complex128: return fill_typed<double>(t.double_val(), numel * 2, &d->data);
    default: return Status::invalid("tensor has no values");
  }
}

// strtoll(c, &end, 10) that consumed all of c: C-locale leading whitespace, one sign, at least
// one digit, clamped to the long long range on overflow; anything else (a NUL inside, trailing
// bytes) is not numeric. Hand-written because it runs twice per record and strtoll's
// locale-aware path is a noticeable part of decoding a scalar's record (bench/README.md,
// "Small tensors").
bool whole_strtoll(std::string_view c, long long* out) {
  size_t i = 0;
  const size_t n = c.size();
  while (i < n && (c[i] == ' ' || (c[i] >= '\t' && c[i] <= '\r'))) ++i;
  bool neg = false;
  if (i < n && (c[i] == '+' || c[i] == '-')) neg = c[i++] == '-';
  if (i == n) return false;
  const unsigned long long limit = neg ? 9223372036854775808ull : 9223372036854775807ull;
  unsigned long long v = 0;
  bool overflow = false;
  for (; i < n; ++i) {
    if (c[i] < '0' || c[i] > '9') return false;
    const unsigned d = static_cast<unsigned>(c[i] - '0');
    if (overflow || v > (limit - d) / 10) overflow = true;
    else v = v * 10 + d;
  }
  if (overflow) v = limit;
  *out = !neg ? static_cast<long long>(v) : v == limit ? LLONG_MIN : -static_cast<long long>(v);
  return true;
}

// Records up to this size are parsed on one protobuf Arena per thread, reset after each record:
// the message tree (Summary, Value, TensorProto, shape, metadata, plugin data: a dozen objects
// per scalar) becomes pointer bumps in a block that is reused, and tearing it down costs no
// per-object deletes. Reusing one heap Event with Clear() does not help: Clear() deletes
// proto3 singular sub-messages, so the whole tree under `summary` is rebuilt anyway.
// Larger records get a plain heap message: the arena's bump allocation would copy a growing
// typed-value array several times, and such a record is rare and dominated by its data.
// tensor_content is swapped out to the caller (its buffer is not arena memory), or left in the
// payload when the caller borrows: a large tensor's record is then parsed without its content,
// as a small one.
constexpr size_t kArenaMaxBytes = 64u << 10;
constexpr size_t kArenaBlockBytes = 16u << 10;  // holds a small record's tree; more grows on demand

// cut: the contents split_tensor_content() took out of payload, one per Summary.Value; null when
// payload is the record as written.
Status parse_and_decode(std::string_view payload, const std::vector<std::string_view>* cut, uint64_t max_growth,
                        pb::Event& ev, std::vector<DecodedTensor>* out) {
  if (!ev.ParseFromArray(payload.data(), static_cast<int>(payload.size())))
    return Status::invalid("event protobuf does not parse");
  if (!ev.has_summary()) return Status::ok();
  if (cut && cut->size() != static_cast<size_t>(ev.summary().value_size()))
    return Status::invalid("event protobuf does not parse");  // cannot happen: one content per value
  size_t index = 0;
  for (auto& v : *ev.mutable_summary()->mutable_value()) {
    const std::string_view* content = cut ? &(*cut)[index++] : nullptr;
    DecodedTensor d;
    d.tag = v.tag();
    d.event_step = ev.step();
    d.mode_step = ev.step();
    for (const auto& pd : v.metadata().plugin_data()) apply_plugin_data(pd.plugin_name(), pd.content(), &d);
    if (v.has_tensor()) {
      if (Status st = decode_tensor(*v.mutable_tensor(), content, max_growth, &d); !st.is_ok())
        return st.prefixed("tensor '" + d.tag + "': ");
    } else if (v.histo().empty()) {
      float f = v.simple_value();  // a TensorBoard scalar: keep it as a 0-d float32
      d.dtype = DType::Float32;
      d.data.assign(reinterpret_cast<const char*>(&f), 4);
    } else {
      continue;  // histograms carry no raw value
    }
    out->push_back(std::move(d));
  }
  return Status::ok();
}

}  // namespace

bool content_fills_shape(size_t content_bytes, size_t item_bytes, int64_t numel) {
  // Divide rather than multiply: a forged shape must not wrap around to the content's size.
  return content_bytes % item_bytes == 0 && static_cast<uint64_t>(numel) == content_bytes / item_bytes;
}

void apply_plugin_data(std::string_view plugin_name, std::string_view content, DecodedTensor* d) {
  long long n = 0;
  const bool numeric = whole_strtoll(content, &n);
  if (plugin_name == "mode_step" && numeric) {
    d->mode_step = n;
    d->has_mode = true;
  } else if (plugin_name == "mode" && numeric && n >= 1 && n <= 4) {
    d->mode = static_cast<Mode>(n);
    d->has_mode = true;
  }
}

uint64_t record_growth_share(uint64_t record_bytes, uint64_t file_bytes) {
  if (file_bytes == 0 || record_bytes >= file_bytes) return record_bytes + kGrowthFloorBytes;
  // record_bytes * floor / file_bytes without overflow: the quotient is below the floor.
  const long double floor_share = static_cast<long double>(kGrowthFloorBytes) * record_bytes / file_bytes;
  return record_bytes + static_cast<uint64_t>(floor_share);
}

Status decode_event(std::string_view payload, std::vector<DecodedTensor>* out, size_t borrow_from_bytes,
                    uint64_t max_growth_bytes) {
  if (decode_smdebug_event(payload, borrow_from_bytes, out)) return Status::ok();
  return decode_event_with_protobuf(payload, out, borrow_from_bytes, max_growth_bytes);
}

Status decode_event_with_protobuf(std::string_view payload, std::vector<DecodedTensor>* out, size_t borrow_from_bytes,
                                  uint64_t max_growth_bytes) {
  std::string stripped;
  std::vector<std::string_view> contents;
  const std::vector<std::string_view>* cut = nullptr;
  if (payload.size() >= borrow_from_bytes && split_tensor_content(payload, &stripped, &contents)) {
    payload = stripped;
    cut = &contents;
  }
  if (payload.size() > kArenaMaxBytes) {
    pb::Event ev;
    return parse_and_decode(payload, cut, max_growth_bytes, ev, out);
  }
  struct ThreadArena {
    std::unique_ptr<char[]> block{new char[kArenaBlockBytes]};  // heap, not 16 KiB of TLS per thread
    google::protobuf::Arena arena{block.get(), kArenaBlockBytes};
  };
  thread_local ThreadArena t;
  struct ResetAfter {
    google::protobuf::Arena& a;
    ~ResetAfter() { a.Reset(); }  // also on an early return: nothing outlives the call
  } reset{t.arena};
  return parse_and_decode(payload, cut, max_growth_bytes, *google::protobuf::Arena::CreateMessage<pb::Event>(&t.arena),
                          out);
}

}  // namespace trialdb
