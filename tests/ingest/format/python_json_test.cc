// python_json.h: strings and lists laid out as Python's json.dumps writes them (expected texts
// taken from Python 3's json.dumps).
#include <gtest/gtest.h>

#include <string>

#include "ingest/format/python_json.h"

namespace trialdb {
namespace {

std::string python_json_string(std::string_view s) {
  std::string out;
  append_python_json_string(&out, s);
  return out;
}

TEST(PythonJson, StringEscapesLikeJsonDumps) {
  EXPECT_EQ(python_json_string(""), "\"\"");
  EXPECT_EQ(python_json_string("layer/weight:0"), "\"layer/weight:0\"");
  EXPECT_EQ(python_json_string("a\"b\\c\n\x01 \xC3\xA9 \xF0\x9F\x98\x80"),
            "\"a\\\"b\\\\c\\n\\u0001 \\u00e9 \\ud83d\\ude00\"");
  EXPECT_EQ(python_json_string("\x1f\t\r\b\f/~"), "\"\\u001f\\t\\r\\b\\f/~\"");
  EXPECT_EQ(python_json_string("a\x7f"), "\"a\\u007f\"");  // DEL is escaped too
}

TEST(PythonJson, NonAsciiBecomesUtf16Escapes) {
  EXPECT_EQ(python_json_string("\xE2\x82\xAC"), "\"\\u20ac\"");             // U+20AC, 3 bytes
  EXPECT_EQ(python_json_string("\xF0\x90\x80\x80"), "\"\\ud800\\udc00\"");  // U+10000
  EXPECT_EQ(python_json_string("\xF4\x8F\xBF\xBF"), "\"\\udbff\\udfff\"");  // U+10FFFF
}

TEST(PythonJson, InvalidUtf8BytesAreEscapedOneByOne) {
  EXPECT_EQ(python_json_string("a\xC3"), "\"a\\u00c3\"");           // cut short at the end
  EXPECT_EQ(python_json_string("\x80z"), "\"\\u0080z\"");           // a lone continuation byte
  EXPECT_EQ(python_json_string("\xC3(x"), "\"\\u00c3(x\"");         // lead byte, no continuation
  EXPECT_EQ(python_json_string("\xE2\x82"), "\"\\u00e2\\u0082\"");  // three-byte sequence cut short
}

TEST(PythonJson, ListsAndBools) {
  std::string out;
  append_python_json_int_list(&out, {4, -1, 0});
  out += ' ';
  append_python_json_int_list(&out, {});
  out += ' ';
  append_python_json_string_list(&out, {"x", "\xC3\xA9"});
  out += ' ';
  append_python_json_string_list(&out, {});
  EXPECT_EQ(out, "[4, -1, 0] [] [\"x\", \"\\u00e9\"] []");
  EXPECT_STREQ(python_json_bool(true), "true");
  EXPECT_STREQ(python_json_bool(false), "false");
}

}  // namespace
}  // namespace trialdb
