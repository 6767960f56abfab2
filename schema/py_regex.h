// Python `re.search` semantics on PCRE2 (JIT where available).
//
// smdebug's collection regexes use lookahead (`^(?!gradient).*weight`), which neither std::regex
// nor RE2 support; PCRE2 does, and its syntax is a superset of Python's for what trials use.
// The few spellings that differ are translated (`\Z` -> `\z`). Matching is unanchored (search).
// A search runs under explicit match, depth and heap limits, the same in every build, so a
// pattern that backtracks catastrophically fails with an error naming it and the limit rather
// than running for hours or answering "no match". A search that nests deeply (`(a|a)*$` on a long
// name) is no such pattern: it is retried with a larger JIT stack, then on the interpreter.
#pragma once
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "schema/status.h"

namespace trialdb {

class PyRegex {
 public:
  // Compiles into *out. When the pattern does not compile: Status kInvalidInput naming the
  // pattern, and *out is null.
  static Status compile(std::string_view pattern, std::unique_ptr<PyRegex>* out);
  ~PyRegex();
  PyRegex(const PyRegex&) = delete;
  PyRegex& operator=(const PyRegex&) = delete;

  // True when the pattern matches anywhere in subject. Throws Error (kInvalidInput) naming the
  // pattern when the search hits a limit (or PCRE2 fails otherwise): a search that could not be
  // finished is neither a match nor a non-match. Not thread-safe (reuses match data).
  bool search(std::string_view subject) const;
  const std::string& pattern() const { return pattern_; }

 private:
  PyRegex() = default;
  std::string pattern_;
  void* code_ = nullptr;        // pcre2_code*
  void* match_data_ = nullptr;  // pcre2_match_data*
  void* context_ = nullptr;     // pcre2_match_context*: the limits
};

// A comma-separated list of patterns (the list syntax of rule parameters, param_list.h; empty
// items are skipped), which matches where any of its patterns does: rule_regexp_any's
// (sqlext/fn_rule.cc), and the rule runner's test of a selection (rules_sql/rule_settings.cc).
struct PyRegexList {
  std::vector<std::unique_ptr<PyRegex>> patterns;

  // Compiles every item into *out; Status kInvalidInput naming the first item that does not compile.
  static Status compile(std::string_view list, std::unique_ptr<PyRegexList>* out);
  // True when any pattern matches anywhere in subject (throws as PyRegex::search).
  bool search(std::string_view subject) const;
};

// Translates Python-only regex spellings to PCRE2.
std::string python_to_pcre2(std::string_view pattern);

}  // namespace trialdb
