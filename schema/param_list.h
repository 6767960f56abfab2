// The list syntax of rule parameters: SageMaker passes every rule parameter as a string, and a
// list (tensor regexes, class labels, numbers) as "a, b, c". The rule declarations check such a
// value when a rule is configured (rules_sql/rule_declaration.cc) and the rule_* SQL functions
// read it when a rule runs (sqlext/fn_rule.cc): both split it here, so they agree on its items.
//
//   split_param_list("0.5, 1,2 ")  -> {"0.5", "1", "2"}
//   split_param_list("  ")         -> {}
//   split_param_list("a,,b")       -> {"a", "", "b"}   (an empty item is kept: the caller says why it is wrong)
#pragma once
#include <string_view>
#include <vector>

namespace trialdb {

// s without leading and trailing blanks (space, tab, carriage return).
inline std::string_view trim_blanks(std::string_view s) {
  constexpr std::string_view kBlanks = " \t\r";
  const size_t first = s.find_first_not_of(kBlanks);
  if (first == std::string_view::npos) return {};
  return s.substr(first, s.find_last_not_of(kBlanks) - first + 1);
}

// The comma-separated items of s, each trimmed; no items when s is blank. The views point into s.
inline std::vector<std::string_view> split_param_list(std::string_view s) {
  std::vector<std::string_view> items;
  if (trim_blanks(s).empty()) return items;
  for (size_t start = 0;;) {
    const size_t comma = s.find(',', start);
    items.push_back(
        trim_blanks(s.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start)));
    if (comma == std::string_view::npos) return items;
    start = comma + 1;
  }
}

}  // namespace trialdb
