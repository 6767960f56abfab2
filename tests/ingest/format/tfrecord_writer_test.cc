// tfrecord.h, writer side: a record written in pieces (record_header, the pieces,
// record_footer) is the record append_record writes in one go.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "ingest/format/crc32c.h"
#include "ingest/format/tfrecord.h"

namespace trialdb {
namespace {

std::string footer_bytes(uint32_t footer) { return std::string(reinterpret_cast<const char*>(&footer), sizeof footer); }

TEST(TfRecordWriter, HeaderIsLengthAndItsMaskedCrc) {
  for (uint64_t length : {uint64_t{0}, uint64_t{5}, uint64_t{1} << 40}) {
    const RecordHeader header = record_header(length);
    uint64_t stored_length;
    uint32_t stored_crc;
    std::memcpy(&stored_length, header.data(), 8);
    std::memcpy(&stored_crc, header.data() + 8, 4);
    EXPECT_EQ(stored_length, length);
    EXPECT_EQ(stored_crc, masked_crc32c(header.data(), 8));
  }
  EXPECT_EQ(kRecordHeaderBytes + kRecordFooterBytes, kRecordOverhead);
}

TEST(TfRecordWriter, PiecesMakeTheSameRecordAsAppendRecord) {
  const std::string head = "head bytes", data(300, 'd'), trailer = "trailer";
  const std::string whole = head + data + trailer;
  const RecordHeader header = record_header(whole.size());
  const std::string framed_head(header.data(), header.size());

  // Real CRC: chained over the pieces, as a streaming writer computes it.
  uint32_t crc = crc32c(head.data(), head.size());
  crc = crc32c(data.data(), data.size(), crc);
  crc = crc32c(trailer.data(), trailer.size(), crc);
  std::string expected;
  append_record(&expected, whole, /*real_crc=*/true);
  EXPECT_EQ(framed_head + whole + footer_bytes(record_footer(crc)), expected);
  EXPECT_EQ(record_footer(crc), masked_crc32c(whole.data(), whole.size()));

  // Checksums off: smdebug's constant footer.
  expected.clear();
  append_record(&expected, whole);
  EXPECT_EQ(framed_head + whole + footer_bytes(smdebug_constant_footer()), expected);
}

}  // namespace
}  // namespace trialdb
