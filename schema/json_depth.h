// A nesting bound for untrusted JSON, checked before a document is built: nlohmann::json parses
// iteratively, but what is done with a document afterwards (dump(), comparisons, our own walks
// over nested arrays) recurses once per level, so a file of a million '[' would exhaust the
// stack. check_json_depth() reads the text once with nlohmann's SAX parser, which keeps its own
// stack on the heap, and stops at the first level past the bound.
#pragma once
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "schema/status.h"

namespace trialdb {

// kInvalidInput ("JSON nested deeper than N levels") when an object or array in `text` lies more
// than max_depth levels deep (the outermost is level 1); ok otherwise, also when the text is not
// JSON at all: the parser that follows says what is wrong with it.
Status check_json_depth(std::string_view text, int max_depth);

// `text` parsed into *out in one reading, under the same bound: the error check_json_depth gives
// when a level lies deeper (*out then holds nothing of the text), else ok with *out the document,
// or discarded (is_discarded()) when the text is not JSON.
Status parse_json_within_depth(std::string_view text, int max_depth, nlohmann::json* out);

}  // namespace trialdb
