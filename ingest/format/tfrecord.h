// TFRecord framing: length | masked crc(length) | data | footer.
//
// smdebug writes the footer as the masked CRC of the constant "0x12345678" unless checksums were
// requested, so a footer is accepted when it is either the real data CRC or that constant;
// anything else is corruption. A record that runs past the end of the bytes available is
// *incomplete* (a live writer may still be flushing), which is not the same as corrupt.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "schema/status.h"

namespace trialdb {

inline constexpr size_t kRecordOverhead = 16;  // 8 length + 4 length crc + 4 footer

struct RecordResult {
  // OK; kIncomplete: the record runs past the bytes given (wait for more); kInvalidInput: the
  // record is corrupt, the cause says how.
  Status status;
  std::string_view payload;  // valid when OK
  size_t consumed = 0;       // bytes of the whole record when OK
};

// Parses one record at the start of bytes.
RecordResult parse_record(std::string_view bytes);

// Appends one framed record (writer side). real_crc: footer = CRC of data, else the constant.
void append_record(std::string* out, std::string_view data, bool real_crc = false);

// Writer side, for a record written in pieces straight from the caller's buffers (no copy into
// one string): record_header(total length), the pieces, then the 4-byte footer, either
// record_footer(crc32c chained over the pieces) or smdebug_constant_footer().
inline constexpr size_t kRecordHeaderBytes = 12;  // 8 length + 4 masked crc(length)
inline constexpr size_t kRecordFooterBytes = 4;
using RecordHeader = std::array<char, kRecordHeaderBytes>;
RecordHeader record_header(uint64_t length);
uint32_t record_footer(uint32_t data_crc);  // data_crc unmasked, as crc32c returns it

}  // namespace trialdb
