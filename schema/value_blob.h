// The value blob: how one raw tensor value is stored (docs/BLOB_FORMAT.md).
//
//   u8 magic 0xB1 | u8 dtype | u8 ndim | u8 flags | ndim x i64 dims (LE) | data
//
// data is the C-order little-endian elements (numel x itemsize bytes); strings are numel
// entries of u32 length + UTF-8 bytes. flags bit 0: data is u64 raw size + a zlib stream;
// bit 1: the bytes were not stored (ingest --values none): the header alone, no data.
// Decoding validates everything (header, dtype, dims, data length) and never reads out of
// bounds, because blobs reach the SQL functions from arbitrary user queries.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "schema/status.h"

namespace trialdb {

enum class DType : uint8_t {
  Bool = 0,
  Int8,
  UInt8,
  Int16,
  UInt16,
  Int32,
  UInt32,
  Int64,
  UInt64,
  Float16,
  BFloat16,
  Float32,
  Float64,
  Complex64,
  Complex128,
  String,
};
inline constexpr int kDTypeCount = 16;

const char* dtype_name(DType t);  // numpy names; "string" for strings
std::optional<DType> dtype_from_name(std::string_view name);
size_t dtype_size(DType t);  // bytes per element; 0 for String
inline bool dtype_is_real(DType t) { return t != DType::String && t != DType::Complex64 && t != DType::Complex128; }

inline constexpr uint8_t kBlobMagic = 0xB1;
inline constexpr uint8_t kBlobZlib = 1;
inline constexpr uint8_t kBlobBytesNotStored = 2;
inline constexpr int kMaxDims = 32;
inline constexpr size_t kBlobHeaderFixed = 4;

// A decoded, validated view of a blob. data points into the blob, or into the caller's
// scratch buffer when the blob was compressed.
struct TensorView {
  DType dtype = DType::Float32;
  int ndim = 0;
  int64_t dims[kMaxDims] = {};
  int64_t numel = 1;
  const uint8_t* data = nullptr;
  size_t data_bytes = 0;
};

// What a compressed blob may inflate to unless the caller passes its connection's
// SQLITE_LIMIT_LENGTH: SQLite's default limit on one value (SQLITE_MAX_LENGTH). The ingest
// compresses only values within its connection's limit, so no blob it wrote inflates past it.
inline constexpr uint64_t kMaxInflatedBytes = 1000000000;

// zlib's deflate cannot shrink data by more than this factor (plus a few bytes of framing): a
// compressed blob claiming more is corrupt, whatever the limit.
inline constexpr uint64_t kMaxDeflateRatio = 1032;

// Validates and decodes. A blob that is not a well-formed value blob is kInvalidInput, saying
// what is wrong with it; the caller names the tensor or argument. A compressed blob that would
// inflate to more than max_inflated_bytes (or more than zlib can produce from its size) is
// refused before anything is allocated for it.
Status decode_blob(const void* blob, size_t size, TensorView* out, std::vector<uint8_t>* scratch,
                   uint64_t max_inflated_bytes = kMaxInflatedBytes);

// What decoding a blob of kBlobBytesNotStored says: the value exists, its bytes are in the event
// file (value_locations), and how to add them.
inline constexpr const char* kBytesNotStoredMessage =
    "this value's bytes were not stored: its trial was ingested with --values none; add them with "
    "'trialdb ingest PATH --db FILE --values all', which reads only the missing values";

// The header of a value whose bytes are not stored (kBlobBytesNotStored): dtype and shape only.
std::string encode_bytes_not_stored(DType dtype, const int64_t* dims, int ndim);
// Whether a blob is such a header.
bool blob_bytes_not_stored(std::string_view blob);

// Appends a header; the caller appends exactly the data bytes the header implies.
void append_blob_header(std::string* out, DType dtype, const int64_t* dims, int ndim, uint8_t flags = 0);

// Header + data in one buffer. compress: zlib the data if that makes it smaller.
std::string encode_blob(DType dtype, const int64_t* dims, int ndim, const void* data, size_t bytes,
                        bool compress = false);

// Element count of a shape, or -1 on overflow / negative dims.
int64_t shape_numel(const int64_t* dims, int ndim);

// JSON array text for a shape, e.g. "[2,3]" ("[]" for 0-d).
std::string shape_json(const int64_t* dims, int ndim);

// float16 / bfloat16 to float (exact).
float half_to_float(uint16_t h);
inline float bfloat16_to_float(uint16_t b) {
  uint32_t u = static_cast<uint32_t>(b) << 16;
  float f;
  __builtin_memcpy(&f, &u, 4);
  return f;
}

}  // namespace trialdb
