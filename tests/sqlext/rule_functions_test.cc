// Unit tests of the rule_* helpers (sqlext/fn_rule.cc) and of the tensor_* semantics the rule
// views rely on (numpy percentile, counting +-Inf as 'inf', allclose with NaN and Inf).
#include "sql_test_util.h"

#include <memory>
#include <string>

#include "sqlext/compiled_cache.h"

namespace trialdb::test {
namespace {

class RuleFn : public SqlTest {};

TEST_F(RuleFn, ParametersParseLikeSageMakerStrings) {
  EXPECT_EQ(q("SELECT rule_real('+inf') > 1e308 AND rule_real(' -Infinity') < -1e308"), "1");
  EXPECT_EQ(q("SELECT rule_real('1e-5')"), "1.0e-05");
  EXPECT_EQ(q("SELECT rule_real(3)"), "3.0");
  EXPECT_EQ(q("SELECT rule_real('none') IS NULL AND rule_real('') IS NULL AND rule_real(NULL) IS NULL"), "1");
  EXPECT_EQ(q("SELECT rule_real('12x')"), "ERROR: rule parameter '12x' is not a number");
  EXPECT_EQ(q("SELECT rule_bool('True') || rule_bool('on') || rule_bool('no') || rule_bool('') || rule_bool(NULL)"),
            "11000");
  EXPECT_EQ(q("SELECT rule_bool('maybe')"), "ERROR: rule parameter 'maybe' is not a boolean (true or false)");
  EXPECT_EQ(q("SELECT rule_list_json('0, 1.5, -inf')"), "[0,1.5,-9e999]");
  EXPECT_EQ(q("SELECT rule_list_json(NULL)"), "[]");
  EXPECT_EQ(q("SELECT rule_list_json('1, x')"), "ERROR: rule parameter list item 'x' is not a number");
  EXPECT_EQ(q("SELECT rule_list_item('0.5, 2', 1)"), "2.0");
  EXPECT_EQ(q("SELECT rule_list_item('0.5, 2', 2)"), "NULL");
}

TEST_F(RuleFn, ListsMatchTrimmedItemsAndPatterns) {
  EXPECT_EQ(q("SELECT rule_in_list('weights', 'biases, weights')"), "1");
  EXPECT_EQ(q("SELECT rule_in_list('weight', 'biases, weights')"), "0");
  EXPECT_EQ(q("SELECT rule_in_list(NULL, 'a')"), "0");
  EXPECT_EQ(q("SELECT rule_regexp_any('^(?!gradient).*weight,foo', 'layer/weight')"), "1");
  EXPECT_EQ(q("SELECT rule_regexp_any('^(?!gradient).*weight,foo', 'gradient/weight')"), "0");
  EXPECT_EQ(q("SELECT rule_regexp_any(NULL, 'x') || rule_regexp_any('', 'x')"), "00");
  EXPECT_TRUE(
      starts_with(q("SELECT rule_regexp_any('a, (b', 'x')"), "ERROR: rule_regexp_any: bad regular expression '(b': "));
  // The compiled list is cached across the rows of one statement, and follows a list that changes.
  EXPECT_EQ(c.rows("WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < 50) "
                   "SELECT count(*) FROM s WHERE rule_regexp_any('^w[0-9]$, ^w5', 'w' || i)"),
            "10");  // w1..w9, w50
  EXPECT_EQ(c.rows("WITH l(p) AS (VALUES ('^a'), ('^b'), ('^a, ^b')) SELECT rule_regexp_any(p, 'b') FROM l"),
            "0\n1\n1");
}

// A pattern list read from a column (a rule's parameter joined into its query) is not a constant
// of the statement, so SQLite drops its auxdata after every row: the connection's cache, keyed by
// the text, keeps it compiled. Twenty lists cycling through the rows (more than the cache holds)
// each match their own subject only.
TEST_F(RuleFn, PatternListsFromAColumnMatchByTheirOwnText) {
  const std::string rows =
      "WITH RECURSIVE s(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM s WHERE i < 199), "
      "p(i, list) AS (SELECT i, '^w' || (i % 20) || '$, ^x' FROM s) ";
  EXPECT_EQ(c.rows(rows + "SELECT sum(rule_regexp_any(list, 'w' || (i % 20))) FROM p"), "200");
  EXPECT_EQ(c.rows(rows + "SELECT sum(rule_regexp_any(list, 'w' || ((i + 1) % 20))) FROM p"), "0");
  EXPECT_EQ(c.rows(rows + "SELECT sum(regexp('^w' || (i % 20) || '$', 'w' || (i % 20))) FROM s"), "200");
}

TEST(CompiledCache, KeepsTheLastTextsCompiledMostRecentlyUsedFirst) {
  using Cache = sqlext::CompiledCache<std::string>;
  Cache cache;
  auto a = std::make_shared<const std::string>("a");
  cache.insert("a", a);
  EXPECT_EQ(cache.find("a"), a);  // the same object: compiled once
  EXPECT_EQ(cache.find("b"), nullptr);
  for (size_t i = 1; i < Cache::kCapacity; ++i)
    cache.insert("t" + std::to_string(i), std::make_shared<const std::string>());
  EXPECT_EQ(cache.find("a"), a);  // full, and "a" used again: "t1" is now the least recent
  cache.insert("new", std::make_shared<const std::string>());
  EXPECT_EQ(cache.find("t1"), nullptr);
  EXPECT_EQ(cache.find("a"), a);
  EXPECT_NE(cache.find("t2"), nullptr);
}

TEST_F(RuleFn, InactiveUnitsTreatAxisZeroAsTheBatch) {
  // 4 samples x 2 units: unit 0 active in 1 of 4 samples (25%), unit 1 never active.
  const std::string v = "tensor_from_json('[[1, 0], [-1, 0], [-2, -3], [0, -1]]')";
  EXPECT_EQ(q("SELECT rule_inactive_units(" + v + ", 0, NULL, 1.0)"), "50.0");
  EXPECT_EQ(q("SELECT rule_inactive_units(" + v + ", 0, NULL, 30.0)"), "100.0");
  EXPECT_EQ(q("SELECT rule_inactive_units(tensor_from_json('[20, 1]'), -9.5, 9.5, 1.0)"), "0.0");  // 1-d: one unit
  // float32 elements against bounds a float cannot hold: compared as the doubles they are. 0.1f
  // is above 0.1 and 0.099999994f below 0.099999995 (each bound rounds to the other float).
  const std::string f = "tensor_from_json('[0.1, 0.09999999403953552]', 'float32')";
  EXPECT_EQ(q("SELECT rule_inactive_units(" + f + ", 0.1, NULL, 40)"), "0.0");          // 0.1f active: 50%
  EXPECT_EQ(q("SELECT rule_inactive_units(" + f + ", NULL, 0.099999995, 40)"), "0.0");  // 0.099999994f
  EXPECT_EQ(q("SELECT rule_inactive_units(" + f + ", 0.1, 0.1, 40)"), "100.0");
  EXPECT_EQ(q("SELECT rule_inactive_units(tensor_from_json('[Infinity, -Infinity, NaN]', 'float32'), NULL, NULL, 90)"),
            "0.0");  // no bounds: every entry is active
  EXPECT_EQ(q("SELECT rule_inactive_units(tensor_from_json('[Infinity, -Infinity, NaN]', 'float32'), -1e300, 1e300, "
              "40)"),
            "100.0");  // none is in range (+Inf is not below 1e300, NaN is in none)
}

TEST_F(RuleFn, LabelPairsAndChannelSums) {
  const std::string pairs = "SELECT label, prediction, n FROM rule_label_pairs";
  EXPECT_EQ(c.rows(pairs + "(tensor_from_json('[0, 1, 1]'), tensor_from_json('[0, 0, 1]'), 0)"), "0|0|1\n1|0|1\n1|1|1");
  EXPECT_EQ(c.rows(pairs + "(tensor_from_json('[1, 0]'), tensor_from_json('[[0.1, 0.9], [0.8, 0.2]]'), 1)"),
            "0|0|1\n1|1|1");
  EXPECT_EQ(c.rows("SELECT count(*) FROM rule_label_pairs(tensor_from_json('[1, 0]'), tensor_from_json('[1]'), 0)"),
            "0");  // counts differ
  // Values with a fraction are truncated toward zero and counted with the class index they give;
  // the first pair (by label, then prediction) holding one is on every row, as the tensors hold it.
  const std::string with_examples =
      "SELECT label, prediction, n, example_label, example_prediction FROM rule_label_pairs";
  EXPECT_EQ(c.rows(with_examples + "(tensor_from_json('[0, 1, 1, -1.5, 0.5]'), "
                                   "tensor_from_json('[0.25, 0.75, 1.5, -0.25, 0.125]'), 0)"),
            "-1|0|1|-1.5|-0.25\n0|0|2|-1.5|-0.25\n1|0|1|-1.5|-0.25\n1|1|1|-1.5|-0.25");
  EXPECT_EQ(c.rows(with_examples + "(tensor_from_json('[2, 1, 1]'), tensor_from_json('[2.5, 1, 0.5]'), 0)"),
            "1|0|1|1.0|0.5\n1|1|1|1.0|0.5\n2|2|1|1.0|0.5");  // label 1 before label 2
  EXPECT_EQ(c.rows(with_examples + "(tensor_from_json('[1, 1]'), tensor_from_json('[1, NaN]'), 0)"),
            "1|1|1|NULL|NULL\n1|NULL|1|NULL|NULL");  // every value an index (a NaN prediction is none)
  // Truncated as SQLite's CAST(x AS INTEGER) truncates (clamped to the int64 range), and a value
  // is a class index exactly when x = CAST(x AS INTEGER) holds in SQLite.
  for (const char* x : {"0.30000000000000004", "-0.5", "-1.5", "2.5", "-0.0", "1e999", "-1e999", "9.3e18", "-9.3e18",
                        "9223372036854775807.0", "-9223372036854775808.0", "9223372036854774784.0"}) {
    const std::string v = std::string("tensor_from_json('[") + x + "]', 'float64')";
    EXPECT_EQ(c.rows("SELECT label = CAST(r AS INTEGER), prediction = CAST(r AS INTEGER), "
                     "(example_label IS NULL) = (r = CAST(r AS INTEGER)) "
                     "FROM (SELECT tensor_at(" +
                     v + ", 0) AS r), rule_label_pairs(" + v + ", " + v + ", 0)"),
              "1|1|1")
        << x;
  }
  // A NaN label is not counted; a NaN prediction is NULL, a pair of its own after the numbers
  // (whichever comes first); argmax: the first NaN of a row wins.
  EXPECT_EQ(c.rows(pairs + "(tensor_from_json('[NaN, 2, 2, 2]'), tensor_from_json('[3, NaN, 2, NaN]'), 0)"),
            "2|2|1\n2|NULL|2");
  EXPECT_EQ(c.rows(pairs + "(tensor_from_json('[2, 2, 1]'), tensor_from_json('[2, NaN, NaN]'), 0)"),
            "1|NULL|1\n2|2|1\n2|NULL|1");
  EXPECT_EQ(c.rows(pairs + "(tensor_from_json('[0, 1]'), tensor_from_json('[[0, NaN, 9], [5, 1, 2]]'), 1)"),
            "0|1|1\n1|0|1");
  EXPECT_EQ(c.rows("SELECT count(*) FROM rule_label_pairs(tensor_from_json('[1]'), tensor_from_json('[1]'))"),
            "ERROR: rule_label_pairs: missing an argument, as in rule_label_pairs(labels, predictions, argmax)");
  // (2, 2, 2) summed per position of axis 1: 1+2+5+6, 3+4+7+8
  EXPECT_EQ(q("SELECT rule_channel_sums(tensor_from_json('[[[1, 2], [3, 4]], [[5, 6], [7, 8]]]'), 1)"), "[14,22]");
  EXPECT_EQ(q("SELECT rule_channel_sums(tensor_from_json('[1, 2]'), 1)"), "NULL");  // no such axis
  // An empty tensor may claim any other dim: the sums' length is checked before anything is allocated.
  const std::string huge(
      "\xB1\x0C\x02\x00"
      "\x00\x00\x00\x00\x00\x01\x00\x00"
      "\x00\x00\x00\x00\x00\x00\x00\x00",
      20);
  EXPECT_EQ(c.q("SELECT tensor_shape(?1)", {huge}), "[1099511627776,0]");
  EXPECT_EQ(c.q("SELECT rule_channel_sums(?1, 0)", {huge}), "ERROR: string or blob too big");
}

TEST_F(RuleFn, TensorHelpersGiveNullForStringsAndComplexButRejectBadBlobs) {
  const std::string s = "tensor_from_json('[\"a\", \"b\"]')", z = "tensor_from_json('[[1, 2]]', 'complex64')";
  EXPECT_EQ(q("SELECT rule_inactive_units(" + s + ", 0, NULL, 1)"), "NULL");
  EXPECT_EQ(q("SELECT rule_channel_sums(" + z + ", 0)"), "NULL");
  EXPECT_EQ(c.rows("SELECT count(*) FROM rule_label_pairs(" + s + ", tensor_from_json('[1, 2]'), 0)"), "0");
  EXPECT_EQ(c.rows("SELECT count(*) FROM rule_label_pairs(tensor_from_json('[1]'), x'B1', 0)"),
            "ERROR: rule_label_pairs: argument 2: value blob too short");
  EXPECT_EQ(q("SELECT rule_inactive_units(NULL, 0, NULL, 1)"), "NULL");
  EXPECT_EQ(q("SELECT rule_channel_sums(x'B1', 0)"), "ERROR: rule_channel_sums: argument 1: value blob too short");
  EXPECT_EQ(q("SELECT rule_inactive_units('text', 0, NULL, 1)"),
            "ERROR: rule_inactive_units: argument 1 is text, not a value blob");
}

TEST_F(RuleFn, Arithmetic) {
  EXPECT_EQ(q("SELECT rule_div(1, 0) > 1e308 AND rule_div(-1, 0) < -1e308"), "1");
  EXPECT_EQ(q("SELECT rule_div(0, 0)"), "NULL");
  EXPECT_EQ(q("SELECT rule_div(3, 2)"), "1.5");
  EXPECT_EQ(q("SELECT rule_log2(8) || ',' || ifnull(rule_log2(0), 'NULL') || ',' || ifnull(rule_log2(-1), 'NULL')"),
            "3.0,NULL,NULL");
  EXPECT_EQ(q("SELECT rule_number_text(3.0) || ' ' || rule_number_text(0.5) || ' ' || rule_number_text(-2)"),
            "3 0.5 -2");
}

// What the rule views take from sqlext instead of copies of their own.
TEST_F(RuleFn, TensorFunctionsTheRulesUse) {
  // all_zero, exploding_tensor, nlp_sequence_ratio: 'inf' counts both signs.
  const std::string v = "tensor_from_json('[NaN, Infinity, -Infinity, 0, 1]')";
  EXPECT_EQ(q("SELECT tensor_count(" + v + ", 'nan') || ',' || tensor_count(" + v + ", 'inf') || ',' || tensor_count(" +
              v + ", 'zero') || ',' || tensor_count(" + v + ", '=', 1) || ',' || tensor_numel(" + v + ")"),
            "1,2,1,1,5");
  // poor_weight_initialization: numpy.percentile([1, 2, 3, 4], 5) = 1.15, 95 -> 3.85
  EXPECT_EQ(q("SELECT round(tensor_percentile(tensor_from_json('[4, 1, 3, 2]'), 5), 10)"), "1.15");
  EXPECT_EQ(q("SELECT round(tensor_percentile(tensor_from_json('[4, 1, 3, 2]'), 95), 10)"), "3.85");
  // unchanged_tensor, similar_across_runs: numpy.allclose.
  EXPECT_EQ(q("SELECT tensor_allclose(tensor_from_json('[NaN]'), tensor_from_json('[NaN]'), 1e-5, 1e-8, 0)"), "0");
  EXPECT_EQ(q("SELECT tensor_allclose(tensor_from_json('[NaN]'), tensor_from_json('[NaN]'), 1e-5, 1e-8, 1)"), "1");
  EXPECT_EQ(
      q("SELECT tensor_allclose(tensor_from_json('[-Infinity]'), tensor_from_json('[-Infinity]'), 1e-5, 1e-8, 0)"),
      "1");
  EXPECT_EQ(q("SELECT tensor_allclose(tensor_from_json('[Infinity]'), tensor_from_json('[-Infinity]'), 1e-5, 1e-8, 0)"),
            "0");
}

}  // namespace
}  // namespace trialdb::test
