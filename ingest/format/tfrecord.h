// TFRecord framing: length | masked crc(length) | data | footer.
//
// smdebug writes the footer as the masked CRC of the constant "0x12345678" unless checksums were
// requested, so a footer is accepted when it is either the real data CRC or that constant;
// anything else is corruption. A record that runs past the end of the bytes available is
// *incomplete* (a live writer may still be flushing), which is not the same as corrupt.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace trialdb {

inline constexpr size_t kRecordOverhead = 16;  // 8 length + 4 length crc + 4 footer

enum class RecordStatus { kOk, kIncomplete, kCorrupt };

struct RecordResult {
  RecordStatus status = RecordStatus::kCorrupt;
  std::string_view payload;   // valid when kOk
  size_t consumed = 0;        // bytes of the whole record when kOk
  std::string error;          // when kCorrupt: what is wrong
};

// Parses one record at the start of bytes.
RecordResult parse_record(std::string_view bytes);

// Appends one framed record (writer side). real_crc: footer = CRC of data, else the constant.
void append_record(std::string* out, std::string_view data, bool real_crc = false);

}  // namespace trialdb
