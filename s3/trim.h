// ASCII whitespace (space, tab, CR, LF) trimmed from both ends: the text of S3's XML elements and
// the lines of the AWS shared configuration files.
#pragma once
#include <string_view>

namespace trialdb {

inline std::string_view trim_ascii_space(std::string_view s) {
  size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos) return {};
  return s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1);
}

}  // namespace trialdb
