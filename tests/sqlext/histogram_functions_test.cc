// The histogram views' functions (sqlext/fn_histogram.cc): histogram_json, histogram_of_element
// and histogram_each, against the plain-SQL arithmetic on bucket_octave (schema.sql) that the views
// used over the JSON text, on values at the edges of the grid.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "schema/database.h"
#include "schema/histogram_blob.h"
#include "sql_test_util.h"

namespace trialdb::test {
namespace {

class HistogramFn : public SqlTest {
 protected:
  void SetUp() override { ASSERT_EQ(c.exec(schema_sql()), ""); }  // bucket_octave
};

std::string sql_real(double x) {
  char b[40];
  std::snprintf(b, sizeof b, "%.17g", x);
  return b;
}

std::vector<double> edge_values() {
  std::vector<double> xs = {1.0,
                            1.5,
                            0.1,
                            3.0,
                            1e-300,
                            1e300,
                            2.2250738585072014e-308,
                            std::numeric_limits<double>::denorm_min(),
                            1e-310,
                            std::numeric_limits<double>::max(),
                            1.0 + 1.0 / 256,
                            1.0 - 1.0 / 256,
                            1.0 - 1.0 / 512,
                            123456.789,
                            0.0078125};
  for (int e = -1074; e <= 1023; e += 37) xs.push_back(std::ldexp(1.0, e));
  for (int e = -1070; e <= 1020; e += 53) xs.push_back(std::ldexp(1.0 + 77.0 / 128 + 1e-9, e));
  const size_t n = xs.size();
  for (size_t i = 0; i < n; ++i) xs.push_back(-xs[i]);
  return xs;
}

// Every octave's edges exactly (first 2^(octave - 1023), scale first / 128; octave 0 the
// subnormals, first 0 and octave 1's scale), and the schema run again on a file that has them adds
// none.
TEST_F(HistogramFn, TheOctaveTableHoldsEveryOctavesExactEdgesOnce) {
  for (int octave = 0; octave <= 2046; ++octave) {
    const double first = octave == 0 ? 0.0 : std::ldexp(1.0, octave - 1023);
    const double scale = std::ldexp(1.0, std::max(octave, 1) - 1023) / 128;
    ASSERT_EQ(q("SELECT first = " + sql_real(first) + " AND scale = " + sql_real(scale) +
                " FROM bucket_octave WHERE octave = " + std::to_string(octave)),
              "1")
        << "octave " << octave;
  }
  ASSERT_EQ(c.exec(schema_sql()), "");
  EXPECT_EQ(q("SELECT count(*) || ' ' || min(octave) || ' ' || max(octave) FROM bucket_octave"), "2047 0 2046");
}

// A one-element value's histogram is the bucket the views' octave arithmetic finds for it.
TEST_F(HistogramFn, AnElementsHistogramIsTheBucketTheOctaveArithmeticFinds) {
  for (double x : edge_values()) {
    const std::string v = sql_real(x);
    const std::string octave_sql =
        "SELECT '{\"' || ((CASE WHEN " + v + " < 0 THEN -1 ELSE 1 END) * coalesce((SELECT o.octave * 128 + CAST((abs(" +
        v + ") - o.first) / o.scale AS INTEGER) + ((abs(" + v + ") - o.first) / o.scale > CAST((abs(" + v +
        ") - o.first) / o.scale AS INTEGER)) FROM bucket_octave o WHERE o.first < abs(" + v +
        ") ORDER BY o.first DESC LIMIT 1), 0)) || '\":[1]}'";
    EXPECT_EQ(c.q("SELECT histogram_json(histogram_of_element(" + v + "))"), c.q(octave_sql)) << v;
  }
  EXPECT_EQ(c.q("SELECT histogram_json(histogram_of_element(0.0)) || histogram_json(histogram_of_element(-0.0))"),
            "{\"0\":[1]}{\"0\":[1]}");
  for (const char* none : {"NULL", "1e999", "-1e999", "'text'", "x'00'"})
    EXPECT_EQ(c.q(std::string("SELECT histogram_of_element(") + none + ")"), "NULL") << none;
}

// histogram_each's edges are the octave arithmetic's, bit for bit, in every octave and sign.
TEST_F(HistogramFn, EachGivesTheOctaveArithmeticsEdges) {
  for (double x : edge_values()) {
    const std::string v = sql_real(x);
    const std::string edges = c.rows(
        "SELECT e.bucket, e.lo = CASE WHEN e.bucket > 0 THEN o.first + ((e.bucket - 1) & 127) * o.scale "
        "                             WHEN e.bucket < 0 THEN -(o.first + ((-e.bucket - 1) & 127) * o.scale + o.scale) "
        "                             ELSE 0.0 END, "
        "       e.hi = CASE WHEN e.bucket > 0 THEN o.first + ((e.bucket - 1) & 127) * o.scale + o.scale "
        "                   WHEN e.bucket < 0 THEN -(o.first + ((-e.bucket - 1) & 127) * o.scale) ELSE 0.0 END, "
        "       e.count, e.lo <= " +
        v + " AND " + v +
        " <= e.hi "
        "FROM histogram_each(histogram_of_element(" +
        v +
        ")) e "
        "JOIN bucket_octave o ON o.octave = max(abs(e.bucket) - 1, 0) >> 7");
    EXPECT_EQ(edges.substr(edges.find('|')), "|1|1|1|1") << v << ": " << edges;
  }
}

TEST_F(HistogramFn, JsonAndEachOfStoredRunsAndTheirErrors) {
  HistogramBlobWriter w;
  w.begin_run(-3);
  for (uint64_t n : {1, 0, 2}) w.add_count(n);
  w.begin_run(130944);
  w.add_count(300);
  std::string blob = "x'";
  for (unsigned char b : w.finish()) {
    char hex[3];
    std::snprintf(hex, sizeof hex, "%02x", b);
    blob += hex;
  }
  blob += "'";
  EXPECT_EQ(c.q("SELECT histogram_json(" + blob + ")"), R"({"-3":[1,0,2],"130944":[300]})");
  EXPECT_EQ(c.rows("SELECT bucket, count FROM histogram_each(" + blob + ")"), "-3|1\n-1|2\n130944|300");
  EXPECT_EQ(c.rows("SELECT lo, hi FROM histogram_each(" + blob + ") WHERE bucket = 130944"), "0.99609375|1.0");
  EXPECT_EQ(c.q("SELECT histogram_json(NULL)"), "NULL");
  EXPECT_EQ(c.rows("SELECT count(*) FROM histogram_each(NULL)"), "0");
  EXPECT_EQ(c.q("SELECT histogram_json(x'01')"), "{}");
  EXPECT_EQ(c.q("SELECT histogram_json(x'0105')"),
            "ERROR: histogram_json: argument 1: histogram blob: truncated varint");
  EXPECT_EQ(c.q("SELECT histogram_json('{}')"), "ERROR: histogram_json: argument 1 is not a histogram blob");
  EXPECT_EQ(c.rows("SELECT * FROM histogram_each(x'02')"),
            "ERROR: histogram_each: argument 1: histogram blob: unknown format byte");
  EXPECT_EQ(c.rows("SELECT * FROM histogram_each(7)"), "ERROR: histogram_each: argument 1 is not a histogram blob");
  EXPECT_EQ(c.rows("SELECT * FROM histogram_each"),
            "ERROR: histogram_each: missing the histogram argument, as in histogram_each(buckets)");
}

}  // namespace
}  // namespace trialdb::test
