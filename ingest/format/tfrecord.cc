#include "ingest/format/tfrecord.h"

#include <cstring>
#include <string>

#include "ingest/format/crc32c.h"

namespace trialdb {

RecordResult parse_record(std::string_view bytes) {
  RecordResult r;
  if (bytes.size() < 12) {
    r.status = Status::incomplete("record header cut short (" + std::to_string(bytes.size()) + " of 12 bytes)");
    return r;
  }
  const auto* p = reinterpret_cast<const uint8_t*>(bytes.data());
  uint64_t len;
  uint32_t len_crc;
  std::memcpy(&len, p, 8);
  std::memcpy(&len_crc, p + 8, 4);
  if (masked_crc32c(p, 8) != len_crc) {
    r.status = Status::invalid("record length CRC mismatch (corrupt length field)");
    return r;
  }
  if (len > bytes.size() - 12 || bytes.size() - 12 - len < 4) {
    r.status = Status::incomplete("record of " + std::to_string(len) + " data bytes runs past the " +
                                  std::to_string(bytes.size()) + " bytes available");
    return r;
  }
  uint32_t footer;
  std::memcpy(&footer, p + 12 + len, 4);
  if (footer != smdebug_constant_footer() && footer != masked_crc32c(p + 12, len)) {
    r.status = Status::invalid("record data CRC mismatch (corrupt data)");
    return r;
  }
  r.payload = bytes.substr(12, len);
  r.consumed = len + kRecordOverhead;
  return r;
}

void append_record(std::string* out, std::string_view data, bool real_crc) {
  const RecordHeader head = record_header(data.size());
  out->append(head.data(), head.size());
  out->append(data);
  uint32_t footer = real_crc ? record_footer(crc32c(data.data(), data.size())) : smdebug_constant_footer();
  out->append(reinterpret_cast<const char*>(&footer), kRecordFooterBytes);
}

RecordHeader record_header(uint64_t length) {
  constexpr size_t kLengthBytes = sizeof length;
  RecordHeader head;
  std::memcpy(head.data(), &length, kLengthBytes);
  const uint32_t length_crc = masked_crc32c(head.data(), kLengthBytes);
  std::memcpy(head.data() + kLengthBytes, &length_crc, sizeof length_crc);
  return head;
}

uint32_t record_footer(uint32_t data_crc) { return mask_crc32c(data_crc); }

}  // namespace trialdb
