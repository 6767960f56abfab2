// libFuzzer target: TFRecord framing on arbitrary bytes, walked record by record as the ingester
// walks an event file. A record reported ok must lie inside the input, and framing its payload
// again (constant footer and real CRC) must parse back to the same payload.
#include <cstdint>
#include <string>
#include <string_view>

#include "ingest/format/tfrecord.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace trialdb;
  std::string_view rest(reinterpret_cast<const char*>(data), size);
  while (!rest.empty()) {
    RecordResult r = parse_record(rest);
    if (r.status.kind() == ErrorKind::kInvalidInput) {
      if (r.status.cause().empty()) __builtin_trap();
      break;
    }
    if (r.status.kind() == ErrorKind::kIncomplete) break;
    if (!r.status.is_ok()) __builtin_trap();  // OK, incomplete or invalid: nothing else
    if (r.consumed != r.payload.size() + kRecordOverhead || r.consumed > rest.size() ||
        r.payload.data() != rest.data() + 12)
      __builtin_trap();
    for (bool real_crc : {false, true}) {
      std::string again;
      append_record(&again, r.payload, real_crc);
      RecordResult a = parse_record(again);
      if (!a.status.is_ok() || a.consumed != again.size() || a.payload != r.payload) __builtin_trap();
    }
    rest.remove_prefix(r.consumed);
  }
  return 0;
}
