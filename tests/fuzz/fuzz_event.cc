// libFuzzer target: Event / Summary / TensorProto decoding of one record's payload, then what the
// ingester does with a decoded tensor: reductions and the value blob. Every decoded tensor must
// hold exactly dtype x shape bytes (strings: one length-prefixed entry per element), so nothing
// downstream can read past it. Decoding with tensor_content borrowed (split_tensor_content on
// every input) must give exactly what decoding the record as written gives, with any borrowed
// bytes inside the input. decode_event reads the Events smdebug writes by hand
// (event_wire_decoder.h): it must give exactly what libprotobuf gives
// (decode_event_with_protobuf), status and tensors, borrowing or not. Broadcasts are bounded as
// the ingest bounds those of a file holding just this record (record_growth_share), so the
// fuzzer's time goes to the decoder's paths, not to filling 256 MiB six times per input.
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "ingest/format/event_decoder.h"
#include "kernels/reductions.h"
#include "schema/value_blob.h"

namespace {

bool same_tensor(const trialdb::DecodedTensor& a, const trialdb::DecodedTensor& b) {
  return a.tag == b.tag && a.event_step == b.event_step && a.has_mode == b.has_mode && a.mode == b.mode &&
         a.mode_step == b.mode_step && a.dtype == b.dtype && a.smdebug_readable == b.smdebug_readable &&
         a.dims == b.dims && a.bytes() == b.bytes();
}

// decode_event agrees with the libprotobuf reference on status and tensors, borrowed alike.
void expect_as_libprotobuf(std::string_view payload, size_t borrow_from_bytes, uint64_t max_growth) {
  using namespace trialdb;
  std::vector<DecodedTensor> got, want;
  const Status g = decode_event(payload, &got, borrow_from_bytes, max_growth);
  const Status w = decode_event_with_protobuf(payload, &want, borrow_from_bytes, max_growth);
  if (g.to_string() != w.to_string() || got.size() != want.size()) __builtin_trap();
  for (size_t i = 0; i < got.size(); ++i)
    if (!same_tensor(got[i], want[i]) || got[i].is_borrowed != want[i].is_borrowed || got[i].data != want[i].data)
      __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace trialdb;
  const std::string_view payload(reinterpret_cast<const char*>(data), size);
  const uint64_t max_growth = record_growth_share(size, size);
  expect_as_libprotobuf(payload, SIZE_MAX, max_growth);
  expect_as_libprotobuf(payload, 0, max_growth);
  std::vector<DecodedTensor> out, borrowing;
  Status err, borrowing_err;
  const bool ok = (err = decode_event(payload, &out, SIZE_MAX, max_growth)).is_ok();
  if ((borrowing_err = decode_event(payload, &borrowing, 0, max_growth)).is_ok() != ok ||
      borrowing_err.to_string() != err.to_string() || borrowing.size() != out.size())
    __builtin_trap();
  if (!ok) {
    if (err.kind() != ErrorKind::kInvalidInput || err.cause().empty()) __builtin_trap();
    return 0;
  }
  for (size_t i = 0; i < out.size(); ++i) {
    const DecodedTensor& a = out[i];
    const DecodedTensor& b = borrowing[i];
    if (a.is_borrowed || !same_tensor(a, b)) __builtin_trap();
    if (b.is_borrowed &&
        (b.borrowed.data() < payload.data() || b.borrowed.data() + b.borrowed.size() > payload.data() + size))
      __builtin_trap();
  }
  for (const DecodedTensor& d : out) {
    const int ndim = static_cast<int>(d.dims.size());
    if (ndim > kMaxDims) __builtin_trap();
    const int64_t numel = shape_numel(d.dims.data(), ndim);
    if (numel < 0) __builtin_trap();
    if (d.dtype == DType::String) {
      size_t at = 0;
      for (int64_t i = 0; i < numel; ++i) {
        uint32_t len;
        if (d.data.size() - at < 4) __builtin_trap();
        std::memcpy(&len, d.data.data() + at, 4);
        at += 4;
        if (d.data.size() - at < len) __builtin_trap();
        at += len;
      }
      if (at != d.data.size()) __builtin_trap();
    } else if (static_cast<uint64_t>(numel) * dtype_size(d.dtype) != d.data.size()) {
      __builtin_trap();
    }
    // Big values (a few bytes may legally broadcast to a MiB or more) are only size-checked:
    // reducing them under ASan would spend the fuzzer's time on arithmetic, not on the decoder.
    if (d.data.size() > (1u << 20)) continue;
    TensorView tv;
    tv.dtype = d.dtype;
    tv.ndim = ndim;
    tv.numel = numel;
    tv.data = reinterpret_cast<const uint8_t*>(d.data.data());
    tv.data_bytes = d.data.size();
    Reductions red;
    (void)compute_reductions(tv, &red);
    std::string blob = encode_blob(d.dtype, d.dims.data(), ndim, d.data.data(), d.data.size());
    TensorView back;
    std::vector<uint8_t> scratch;
    if (!decode_blob(blob.data(), blob.size(), &back, &scratch).is_ok() || back.numel != numel ||
        back.data_bytes != d.data.size())
      __builtin_trap();
  }
  return 0;
}
