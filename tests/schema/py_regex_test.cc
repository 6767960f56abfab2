// Unit tests of the Python-regex matcher: re.search semantics, lookahead.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "schema/py_regex.h"

using namespace trialdb;

namespace {
// The compiled pattern; fails the test (naming the error) when it does not compile.
std::unique_ptr<PyRegex> compiled(std::string_view pattern) {
  std::unique_ptr<PyRegex> re;
  Status st = PyRegex::compile(pattern, &re);
  EXPECT_TRUE(st.is_ok()) << st.to_string();
  return re;
}
}  // namespace

TEST(PyRegex, SearchSemanticsAndLookahead) {
  auto re = compiled("^(?!gradient).*weight");
  ASSERT_TRUE(re);
  EXPECT_TRUE(re->search("Net_conv0.weight"));
  EXPECT_FALSE(re->search("gradient/Net_conv0.weight"));
  auto loss = compiled("[Ll]oss_(?!input).*output");
  EXPECT_TRUE(loss->search("CrossEntropyLoss_output_0"));
  auto unanchored = compiled("relu");
  EXPECT_TRUE(unanchored->search("layer0_relu_output"));  // search, not match
  auto z = compiled("abc\\Z");
  EXPECT_TRUE(z->search("xabc"));
  EXPECT_FALSE(z->search("abc\n"));
  auto named = compiled("(?P<x>a)(?P=x)");
  ASSERT_TRUE(named);
  EXPECT_TRUE(named->search("aa"));
  std::unique_ptr<PyRegex> bad;
  Status st = PyRegex::compile("(unclosed", &bad);
  EXPECT_FALSE(bad);
  EXPECT_EQ(st.kind(), ErrorKind::kInvalidInput);
  EXPECT_NE(st.cause().find("(unclosed"), std::string::npos);
}

// A leading `.*` changes nothing a search finds (the search runs without it): the same answers as
// the pattern without it, where the rest must match, at the start, the end or past a newline;
// and a lazy, possessive or counted `.*` is left as written.
TEST(PyRegex, LeadingDotStarFindsWhatTheRestFinds) {
  const std::vector<std::string> subjects = {"", "a", "ba", "xtanh_input_0", "tanh", "a\nb", "b\na", "\nab", "aab"};
  for (const char* rest : {"", "a", "b$", "^a", "a|b", "tanh_input", "(?<=a)b", "\\Z", "b\\Z", "a(?=b)", "(a)\\1"}) {
    auto with = compiled(std::string(".*") + rest);
    auto without = compiled(rest);
    ASSERT_TRUE(with && without) << rest;
    for (const std::string& subject : subjects)
      EXPECT_EQ(with->search(subject), without->search(subject)) << ".*" << rest << " on '" << subject << "'";
  }
  EXPECT_TRUE(compiled(".*?a")->search("ba"));
  EXPECT_FALSE(compiled(".*+a")->search("ba"));  // possessive: takes the a, gives nothing back
  EXPECT_FALSE(compiled("^.*a")->search("b\na"));
  EXPECT_TRUE(compiled("^.*a")->search("ba"));  // only a leading `.*` is left out
  EXPECT_TRUE(compiled("b.*a")->search("bxa"));
  EXPECT_TRUE(compiled(".*^a")->search("a"));
  EXPECT_FALSE(compiled(".*^a")->search("ba"));
  std::unique_ptr<PyRegex> bad;
  Status st = PyRegex::compile(".*(unclosed", &bad);  // the error names the pattern as given
  EXPECT_FALSE(bad);
  EXPECT_NE(st.cause().find("'.*(unclosed'"), std::string::npos) << st.cause();
  EXPECT_EQ(compiled(".*relu")->pattern(), ".*relu");
}
