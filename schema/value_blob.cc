#include "schema/value_blob.h"

#include <zlib.h>

#include <cstring>
#include <limits>

namespace trialdb {

namespace {
// What a zlib stream of no payload still takes (header, empty block, checksum), allowed on top
// of kMaxDeflateRatio.
constexpr uint64_t kZlibFramingBytes = 64;

struct DTypeInfo {
  const char* name;
  size_t size;
};
constexpr DTypeInfo kInfo[kDTypeCount] = {
    {"bool", 1},    {"int8", 1},      {"uint8", 1},       {"int16", 2},   {"uint16", 2},   {"int32", 4},
    {"uint32", 4},  {"int64", 8},     {"uint64", 8},      {"float16", 2}, {"bfloat16", 2}, {"float32", 4},
    {"float64", 8}, {"complex64", 8}, {"complex128", 16}, {"string", 0},
};

uint64_t load_u64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

// Strings: numel entries of u32 length + bytes that exactly fill the data section.
bool strings_fit(const uint8_t* p, size_t n, int64_t numel) {
  size_t off = 0;
  for (int64_t i = 0; i < numel; ++i) {
    if (n - off < 4) return false;
    uint32_t len;
    std::memcpy(&len, p + off, 4);
    off += 4;
    if (n - off < len) return false;
    off += len;
  }
  return off == n;
}
}  // namespace

const char* dtype_name(DType t) {
  auto i = static_cast<unsigned>(t);
  return i < kDTypeCount ? kInfo[i].name : "unknown";
}

std::optional<DType> dtype_from_name(std::string_view name) {
  for (int i = 0; i < kDTypeCount; ++i)
    if (name == kInfo[i].name) return static_cast<DType>(i);
  return std::nullopt;
}

size_t dtype_size(DType t) {
  auto i = static_cast<unsigned>(t);
  return i < kDTypeCount ? kInfo[i].size : 0;
}

int64_t shape_numel(const int64_t* dims, int ndim) {
  int64_t n = 1;
  for (int i = 0; i < ndim; ++i) {
    if (dims[i] < 0) return -1;
    if (dims[i] != 0 && n > std::numeric_limits<int64_t>::max() / dims[i]) return -1;
    n *= dims[i];
  }
  return n;
}

std::string shape_json(const int64_t* dims, int ndim) {
  std::string s = "[";
  for (int i = 0; i < ndim; ++i) {
    if (i) s += ',';
    s += std::to_string(dims[i]);
  }
  s += ']';
  return s;
}

Status decode_blob(const void* blob, size_t size, TensorView* out, std::vector<uint8_t>* scratch,
                   uint64_t max_inflated_bytes) {
  const auto* p = static_cast<const uint8_t*>(blob);
  if (!p || size < kBlobHeaderFixed) return Status::invalid("value blob too short");
  if (p[0] != kBlobMagic) return Status::invalid("not a trialdb value blob (bad magic byte)");
  if (p[1] >= kDTypeCount) return Status::invalid("value blob has an unknown dtype");
  if (p[2] > kMaxDims) return Status::invalid("value blob has too many dimensions");
  if (p[3] == kBlobBytesNotStored) return Status::invalid(kBytesNotStoredMessage);
  if (p[3] & ~kBlobZlib) return Status::invalid("value blob has unknown flags");
  out->dtype = static_cast<DType>(p[1]);
  out->ndim = p[2];
  size_t off = kBlobHeaderFixed + 8 * static_cast<size_t>(out->ndim);
  if (size < off) return Status::invalid("value blob truncated in its shape");
  for (int i = 0; i < out->ndim; ++i) out->dims[i] = static_cast<int64_t>(load_u64(p + 4 + 8 * i));
  out->numel = shape_numel(out->dims, out->ndim);
  if (out->numel < 0) return Status::invalid("value blob has an invalid shape");

  const uint8_t* data = p + off;
  size_t n = size - off;
  if (p[3] & kBlobZlib) {
    if (n < 8) return Status::invalid("compressed value blob truncated");
    uint64_t raw = load_u64(data);
    size_t item = dtype_size(out->dtype);
    // The raw size must be what the header implies (strings: at least 4 bytes per element).
    if (item && (static_cast<uint64_t>(out->numel) > std::numeric_limits<uint64_t>::max() / item ||
                 raw != static_cast<uint64_t>(out->numel) * item))
      return Status::invalid("compressed value blob has a wrong size");
    if (raw > (n - 8) * kMaxDeflateRatio + kZlibFramingBytes)
      return Status::invalid("compressed value blob claims an impossible uncompressed size");
    if (raw > max_inflated_bytes)
      return Status::invalid("compressed value blob would inflate to " + std::to_string(raw) +
                             " bytes, over the limit of " + std::to_string(max_inflated_bytes) +
                             " bytes for one value");
    scratch->resize(raw);
    uLongf dest = static_cast<uLongf>(raw);
    if (uncompress(scratch->data(), &dest, data + 8, static_cast<uLong>(n - 8)) != Z_OK || dest != raw)
      return Status::invalid("compressed value blob is corrupt");
    data = scratch->data();
    n = raw;
  }
  if (out->dtype == DType::String) {
    if (!strings_fit(data, n, out->numel)) return Status::invalid("value blob string data has a wrong length");
  } else {
    size_t item = dtype_size(out->dtype);
    if (static_cast<uint64_t>(out->numel) > n / item || static_cast<uint64_t>(out->numel) * item != n)
      return Status::invalid("value blob data length does not match dtype and shape");
  }
  out->data = data;
  out->data_bytes = n;
  return Status::ok();
}

std::string encode_bytes_not_stored(DType dtype, const int64_t* dims, int ndim) {
  std::string out;
  append_blob_header(&out, dtype, dims, ndim, kBlobBytesNotStored);
  return out;
}

bool blob_bytes_not_stored(std::string_view blob) {
  return blob.size() >= kBlobHeaderFixed && static_cast<uint8_t>(blob[0]) == kBlobMagic &&
         static_cast<uint8_t>(blob[3]) == kBlobBytesNotStored;
}

void append_blob_header(std::string* out, DType dtype, const int64_t* dims, int ndim, uint8_t flags) {
  out->push_back(static_cast<char>(kBlobMagic));
  out->push_back(static_cast<char>(dtype));
  out->push_back(static_cast<char>(ndim));
  out->push_back(static_cast<char>(flags));
  for (int i = 0; i < ndim; ++i) {
    uint64_t d = static_cast<uint64_t>(dims[i]);
    out->append(reinterpret_cast<const char*>(&d), 8);
  }
}

std::string encode_blob(DType dtype, const int64_t* dims, int ndim, const void* data, size_t bytes, bool compress) {
  std::string out;
  if (compress && bytes >= 64) {
    uLongf bound = compressBound(static_cast<uLong>(bytes));
    std::string z(bound, '\0');
    if (compress2(reinterpret_cast<Bytef*>(z.data()), &bound, static_cast<const Bytef*>(data),
                  static_cast<uLong>(bytes), Z_DEFAULT_COMPRESSION) == Z_OK &&
        bound + 8 < bytes) {
      out.reserve(kBlobHeaderFixed + 8 * ndim + 8 + bound);
      append_blob_header(&out, dtype, dims, ndim, kBlobZlib);
      uint64_t raw = bytes;
      out.append(reinterpret_cast<const char*>(&raw), 8);
      out.append(z.data(), bound);
      return out;
    }
  }
  out.reserve(kBlobHeaderFixed + 8 * ndim + bytes);
  append_blob_header(&out, dtype, dims, ndim);
  out.append(static_cast<const char*>(data), bytes);
  return out;
}

float half_to_float(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1f;
  uint32_t mant = h & 0x3ff;
  uint32_t u;
  if (exp == 0) {
    if (mant == 0) {
      u = sign;
    } else {  // subnormal: normalise
      exp = 127 - 15 + 1;
      while (!(mant & 0x400)) {
        mant <<= 1;
        --exp;
      }
      mant &= 0x3ff;
      u = sign | (exp << 23) | (mant << 13);
    }
  } else if (exp == 31) {
    u = sign | 0x7f800000u | (mant << 13);
  } else {
    u = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

}  // namespace trialdb
