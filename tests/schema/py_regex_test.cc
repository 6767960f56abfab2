// Unit tests of the Python-regex matcher: re.search semantics, lookahead.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "schema/py_regex.h"

using namespace trialdb;

TEST(PyRegex, SearchSemanticsAndLookahead) {
  std::string err;
  auto re = PyRegex::compile("^(?!gradient).*weight", &err);
  ASSERT_TRUE(re) << err;
  EXPECT_TRUE(re->search("Net_conv0.weight"));
  EXPECT_FALSE(re->search("gradient/Net_conv0.weight"));
  auto loss = PyRegex::compile("[Ll]oss_(?!input).*output", &err);
  EXPECT_TRUE(loss->search("CrossEntropyLoss_output_0"));
  auto unanchored = PyRegex::compile("relu", &err);
  EXPECT_TRUE(unanchored->search("layer0_relu_output"));   // search, not match
  auto z = PyRegex::compile("abc\\Z", &err);
  EXPECT_TRUE(z->search("xabc"));
  EXPECT_FALSE(z->search("abc\n"));
  auto named = PyRegex::compile("(?P<x>a)(?P=x)", &err);
  ASSERT_TRUE(named) << err;
  EXPECT_TRUE(named->search("aa"));
  EXPECT_FALSE(PyRegex::compile("(unclosed", &err));
  EXPECT_NE(err.find("(unclosed"), std::string::npos);
}
