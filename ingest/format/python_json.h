// JSON text laid out as Python's json.dumps writes it with its defaults, so the index and
// collections files this project writes match smdebug's byte for byte.
//
// The defaults that matter: ", " between items and ": " after keys, no newlines, and
// ensure_ascii (every non-ASCII character written as a \uXXXX escape, astral characters as a
// UTF-16 surrogate pair). sqlext/json_text.h writes compact JSON for SQL and keeps UTF-8 as is;
// the two are not interchangeable.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace trialdb {

// A string literal: `"a\u00e9"` for "aé". Bytes that are not valid UTF-8 are escaped one by
// one as the code point of the same number (\u00XX), so any input gives valid JSON.
void append_python_json_string(std::string* out, std::string_view s);

// Lists: "[4, 1, 3]" and "[\"a\", \"b\"]".
void append_python_json_int_list(std::string* out, const std::vector<int64_t>& values);
void append_python_json_string_list(std::string* out, const std::vector<std::string>& values);

// "true" / "false".
const char* python_json_bool(bool value);

}  // namespace trialdb
