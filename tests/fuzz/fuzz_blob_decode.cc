// libFuzzer target: the value-blob decoder on arbitrary bytes. A successful decode must describe
// memory inside the blob (or the inflate buffer), and re-encoding the view must give a blob that
// decodes to the same dtype, shape and data.
#include <cstdint>
#include <cstring>
#include <vector>

#include "kernels/element_loader.h"
#include "schema/value_blob.h"

volatile uint8_t g_sink;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace trialdb;
  TensorView v;
  std::vector<uint8_t> scratch;
  // Same guard as sqlext's get_tensor: a compressed blob cannot claim more than zlib's maximum
  // expansion, so the fuzzer does not spend its memory on forged sizes.
  if (size >= 4 && data[0] == kBlobMagic && (data[3] & kBlobZlib) && data[2] <= kMaxDims) {
    size_t off = 4 + 8 * static_cast<size_t>(data[2]);
    if (size >= off + 8) {
      uint64_t raw;
      std::memcpy(&raw, data + off, 8);
      if (raw > (size - off - 8) * 1032 + 64) return 0;
    }
  }
  if (const Status st = decode_blob(data, size, &v, &scratch); !st.is_ok()) {
    if (st.kind() != ErrorKind::kInvalidInput || st.cause().empty()) __builtin_trap();
    return 0;
  }
  // Touch every data byte so ASan sees any out-of-bounds view.
  uint8_t acc = 0;
  for (size_t i = 0; i < v.data_bytes; ++i) acc ^= v.data[i];
  g_sink = acc;
  if (dtype_is_real(v.dtype))
    for (int64_t i = 0; i < v.numel && i < 4096; ++i) (void)element_as_double(v, i);
  std::string again = encode_blob(v.dtype, v.dims, v.ndim, v.data, v.data_bytes);
  TensorView w;
  std::vector<uint8_t> scratch2;
  if (!decode_blob(again.data(), again.size(), &w, &scratch2).is_ok()) __builtin_trap();
  if (w.dtype != v.dtype || w.ndim != v.ndim || w.numel != v.numel || w.data_bytes != v.data_bytes ||
      (v.data_bytes && std::memcmp(w.data, v.data, v.data_bytes) != 0))
    __builtin_trap();
  return 0;
}
