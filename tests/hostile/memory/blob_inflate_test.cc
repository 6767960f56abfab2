// B6: a compressed value blob cannot make the SQL functions (or anything else decoding blobs)
// allocate more than one value may hold: the inflated size is bounded by the connection's
// SQLITE_LIMIT_LENGTH in SQL and by kMaxInflatedBytes elsewhere, before anything is allocated,
// not only by zlib's maximum ratio.
#include <sys/resource.h>

#include <cstring>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "schema/value_blob.h"
#include "tests/sqlext/sql_test_util.h"

namespace trialdb {
namespace {

constexpr int64_t kZeros = 4 << 20;                    // float32 elements: 16 MiB inflated, a few KiB deflated
constexpr int kSmallLimit = 1 << 20;                   // SQLITE_LIMIT_LENGTH of the test connection
constexpr int64_t kForgedElements = int64_t{1} << 29;  // claims 2 GiB of float32
constexpr size_t kForgedCompressed = 3u << 20;         // enough bytes for zlib's ratio to allow 2 GiB
constexpr long kMaxGrowthKb = 64 * 1024;               // a refusal allocates nothing of the claimed size

std::string zeros_blob() {
  std::vector<float> zeros(kZeros, 0.0f);
  const int64_t dims[] = {kZeros};
  std::string b = encode_blob(DType::Float32, dims, 1, zeros.data(), zeros.size() * sizeof(float), true);
  EXPECT_TRUE(b[3] & kBlobZlib);  // really compressed
  return b;
}

long peak_rss_kb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

TEST(BlobInflate, SqlFunctionsStopAtTheConnectionsLengthLimit) {
  test::SqlConn c;
  const std::string blob = zeros_blob();
  EXPECT_EQ(c.q("SELECT tensor_reduce(?1, 'sum')", {blob}), "0.0");
  sqlite3_limit(c.db(), SQLITE_LIMIT_LENGTH, kSmallLimit);
  const std::string r = c.q("SELECT tensor_reduce(?1, 'sum')", {blob});
  EXPECT_NE(r.find("ERROR: tensor_reduce: argument 1: compressed value blob would inflate to"), std::string::npos) << r;
  EXPECT_NE(r.find(std::to_string(kSmallLimit)), std::string::npos) << r;
}

TEST(BlobInflate, DecodeBlobHonoursTheCallersLimit) {
  const std::string blob = zeros_blob();
  TensorView v;
  std::vector<uint8_t> scratch;
  EXPECT_TRUE(decode_blob(blob.data(), blob.size(), &v, &scratch).is_ok());
  scratch.clear();
  scratch.shrink_to_fit();
  const Status st = decode_blob(blob.data(), blob.size(), &v, &scratch, kSmallLimit);
  EXPECT_EQ(st.kind(), ErrorKind::kInvalidInput);
  EXPECT_NE(st.cause().find("over the limit"), std::string::npos) << st.cause();
  EXPECT_TRUE(scratch.empty());
}

TEST(BlobInflate, ForgedSizeWithinZlibsRatioIsRefusedBeforeAllocating) {
  const int64_t dims[] = {kForgedElements};
  std::string blob;
  append_blob_header(&blob, DType::Float32, dims, 1, kBlobZlib);
  const uint64_t raw = static_cast<uint64_t>(kForgedElements) * sizeof(float);
  blob.append(reinterpret_cast<const char*>(&raw), sizeof raw);
  blob.append(kForgedCompressed, '\x5a');
  const long before = peak_rss_kb();
  test::SqlConn c;
  const std::string r = c.q("SELECT tensor_reduce(?1, 'sum')", {blob});
  EXPECT_NE(r.find("would inflate to " + std::to_string(raw)), std::string::npos) << r;
  TensorView v;
  std::vector<uint8_t> scratch;
  const Status st = decode_blob(blob.data(), blob.size(), &v, &scratch);
  EXPECT_NE(st.cause().find("over the limit of " + std::to_string(kMaxInflatedBytes)), std::string::npos) << st.cause();
  EXPECT_LT(peak_rss_kb() - before, kMaxGrowthKb);
}

}  // namespace
}  // namespace trialdb
