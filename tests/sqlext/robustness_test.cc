// Thousands of malformed blobs (random bytes, every truncation of valid blobs, bit flips,
// forged headers) and random JSON text into every function: each call must end in a result or
// an SQL error, never a crash or an out-of-bounds read (run under ASan by scripts/fuzz.sh's
// build and the TRIALDB_SANITIZE build), and every truncated blob must be an error.
#include <cstring>
#include <random>

#include "schema/value_blob.h"
#include "sql_test_util.h"

namespace trialdb::test {
namespace {

const char* const kCalls[] = {
    "SELECT tensor_dtype(?1)",
    "SELECT tensor_shape(?1)",
    "SELECT tensor_ndim(?1)",
    "SELECT tensor_numel(?1)",
    "SELECT tensor_bytes(?1)",
    "SELECT tensor_reduce(?1, 'sum')",
    "SELECT tensor_reduce(?1, 'std', 1)",
    "SELECT tensor_reduce(?1, 'min')",
    "SELECT tensor_reduce(?1, 'prod')",
    "SELECT tensor_reduce_axis(?1, 'mean', 0)",
    "SELECT tensor_reduce_axis(?1, 'max', -1)",
    "SELECT tensor_argmax(?1)",
    "SELECT tensor_argmax(?1, 0)",
    "SELECT tensor_json(?1)",
    "SELECT tensor_json(?1, 3)",
    "SELECT tensor_at(?1, 0)",
    "SELECT tensor_at(?1, -1)",
    "SELECT tensor_at(?1, 0, 0)",
    "SELECT tensor_count(?1, 'nan')",
    "SELECT tensor_count(?1, '>', 0)",
    "SELECT tensor_count(?1, '=', 'a')",
    "SELECT tensor_fraction(?1, 'finite')",
    "SELECT tensor_percentile(?1, 50)",
    "SELECT tensor_histogram(?1, 4)",
    "SELECT tensor_histogram(?1, 3, -1, 1)",
    "SELECT tensor_allclose(?1, ?2)",
    "SELECT tensor_allclose(?2, ?1, 0.1, 0.1, 1)",
    "SELECT tensor_diff_norm(?1, ?2)",
    "SELECT tensor_map(?1, 'abs')",
    "SELECT tensor_map(?1, '+', 1)",
    "SELECT tensor_map(?1, '<', 0)",
    "SELECT tensor_binop(?1, '*', ?2)",
    "SELECT tensor_binop(?2, '-', ?1)",
    "SELECT tensor_bincount(?1)",
    "SELECT tensor_sum(v) FROM (SELECT ?1 v UNION ALL SELECT ?1)",
    "SELECT tensor_concat(v) FROM (SELECT ?1 v UNION ALL SELECT ?1)",
    "SELECT count(*) FROM tensor_each(?1)",
    "SELECT sum(value) FROM tensor_each(?1)",
    "SELECT tensor_from_json(tensor_json(?1), tensor_dtype(?1))",
};

std::string blob_of(DType t, std::vector<int64_t> dims, const std::string& data, bool compress = false) {
  return encode_blob(t, dims.data(), static_cast<int>(dims.size()), data.data(), data.size(), compress);
}

std::vector<std::string> valid_blobs() {
  std::vector<std::string> out;
  std::mt19937 rng(7);
  for (int code = 0; code < kDTypeCount; ++code) {
    DType t = static_cast<DType>(code);
    if (t == DType::String) {
      std::string s;
      for (const char* e : {"a", "", "xyz", "\xff\xfe"}) {
        uint32_t n = static_cast<uint32_t>(std::strlen(e));
        s.append(reinterpret_cast<const char*>(&n), 4);
        s.append(e);
      }
      out.push_back(blob_of(t, {2, 2}, s));
      continue;
    }
    size_t item = dtype_size(t);
    for (std::vector<int64_t> dims : std::vector<std::vector<int64_t>>{{}, {5}, {2, 3}, {0, 4}, {3, 1, 2}}) {
      int64_t n = shape_numel(dims.data(), static_cast<int>(dims.size()));
      std::string data(n * item, '\0');
      for (auto& c : data) c = static_cast<char>(rng() % 5 == 0 ? rng() : rng() % 3);
      out.push_back(blob_of(t, dims, data));
    }
    std::string big(200 * item, '\1');
    out.push_back(blob_of(t, {200}, big, /*compress=*/true));
  }
  return out;
}

class Robustness : public ::testing::Test {
 protected:
  SqlConn c;
  int64_t calls = 0, errors = 0;
  void SetUp() override { sqlite3_limit(c.db(), SQLITE_LIMIT_LENGTH, 1 << 20); }

  // Runs every call with blob as ?1 (and other as ?2); returns how many ended in an error.
  int run_all(const std::string& blob, const std::string& other) {
    int errs = 0;
    for (const char* sql : kCalls) {
      sqlite3_stmt* st = nullptr;
      EXPECT_EQ(sqlite3_prepare_v2(c.db(), sql, -1, &st, nullptr), SQLITE_OK) << sql;
      sqlite3_bind_blob(st, 1, blob.data(), static_cast<int>(blob.size()), SQLITE_STATIC);
      sqlite3_bind_blob(st, 2, other.data(), static_cast<int>(other.size()), SQLITE_STATIC);
      int rc;
      while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        for (int i = 0; i < sqlite3_column_count(st); ++i) sqlite3_column_blob(st, i);
      }
      EXPECT_TRUE(rc == SQLITE_DONE || rc == SQLITE_ERROR || rc == SQLITE_TOOBIG) << sql << " rc=" << rc;
      if (rc != SQLITE_DONE) {
        ++errs;
        EXPECT_GT(std::strlen(sqlite3_errmsg(c.db())), 10u) << sql;
      }
      sqlite3_finalize(st);
      ++calls;
    }
    errors += errs;
    return errs;
  }
};

TEST_F(Robustness, EveryTruncationOfValidBlobsIsAnError) {
  std::vector<std::string> blobs = valid_blobs();
  const std::string other = blobs[blobs.size() / 2];
  for (const std::string& b : blobs) {
    run_all(b, other);
    for (size_t len = 0; len < b.size(); len += (b.size() > 64 ? 7 : 1)) {
      std::string cut = b.substr(0, len);
      // Every call takes ?1 as a tensor, so every call must fail.
      EXPECT_EQ(run_all(cut, other), static_cast<int>(std::size(kCalls)))
          << "blob of " << b.size() << " cut at " << len;
    }
  }
  EXPECT_GT(calls, 10000);
}

TEST_F(Robustness, RandomAndMutatedBlobsNeverCrash) {
  std::vector<std::string> blobs = valid_blobs();
  std::mt19937 rng(1234);
  for (int iter = 0; iter < 300; ++iter) {
    std::string b;
    switch (iter % 3) {
      case 0: {  // random bytes, sometimes behind a valid magic
        b.resize(rng() % 64);
        for (auto& ch : b) ch = static_cast<char>(rng());
        if (b.size() > 4 && rng() % 2)
          b[0] = static_cast<char>(kBlobMagic), b[2] = static_cast<char>(rng() % 4), b[3] = 0;
        break;
      }
      case 1: {  // bit flips in a valid blob
        b = blobs[rng() % blobs.size()];
        for (int k = 0; k < 1 + static_cast<int>(rng() % 3); ++k)
          b[rng() % b.size()] ^= static_cast<char>(1 << (rng() % 8));
        break;
      }
      case 2: {  // a valid header with forged dims
        b = blobs[rng() % blobs.size()];
        if (b[2] > 0) {
          int64_t d = static_cast<int64_t>(rng()) * (rng() % 2 ? 1 : -1) * ((rng() % 4 == 0) ? (int64_t{1} << 31) : 1);
          std::memcpy(b.data() + 4 + 8 * (rng() % static_cast<unsigned char>(b[2])), &d, 8);
        }
        break;
      }
    }
    run_all(b, blobs[rng() % blobs.size()]);
  }
  EXPECT_EQ(calls, 300 * static_cast<int64_t>(std::size(kCalls)));
  EXPECT_GT(errors, calls / 2);  // most mutations are caught
}

TEST_F(Robustness, RandomJsonTextNeverCrashes) {
  std::mt19937 rng(99);
  const std::string alphabet = "[[[]],,,0123456789.-eE\"\\ntrufalsNaIy{}: ";
  int ok = 0;
  for (int iter = 0; iter < 3000; ++iter) {
    std::string s(rng() % 40, ' ');
    for (auto& ch : s) ch = alphabet[rng() % alphabet.size()];
    sqlite3_stmt* st = nullptr;
    ASSERT_EQ(sqlite3_prepare_v2(c.db(), "SELECT tensor_json(tensor_from_json(?1, ?2))", -1, &st, nullptr), SQLITE_OK);
    sqlite3_bind_text(st, 1, s.data(), static_cast<int>(s.size()), SQLITE_STATIC);
    const char* dt = dtype_name(static_cast<DType>(rng() % kDTypeCount));
    sqlite3_bind_text(st, 2, dt, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    EXPECT_TRUE(rc == SQLITE_ROW || rc == SQLITE_ERROR) << s;
    ok += rc == SQLITE_ROW;
    sqlite3_finalize(st);
  }
  EXPECT_GT(ok, 0);
}

}  // namespace
}  // namespace trialdb::test
