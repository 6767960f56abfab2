// UTF-8 as RFC 3629 defines it: the one check every writer of text uses before passing bytes of
// a name or a string tensor on as text (terminal output, JSON, SVG), where invalid UTF-8 would
// make the text unreadable to its reader (Python's sqlite3, an XML parser).
#pragma once
#include <cstddef>
#include <string_view>

namespace trialdb {

// The length of the well-formed UTF-8 sequence starting at s[i]: 1 for ASCII, 2 to 4 for a
// multi-byte character (no overlong forms, surrogates or code points past U+10FFFF), 0 when the
// bytes there are no character.
inline size_t utf8_sequence_length(std::string_view s, size_t i) {
  auto byte = [&](size_t k) { return i + k < s.size() ? static_cast<unsigned char>(s[i + k]) : 0u; };
  auto cont = [&](size_t k) { return (byte(k) & 0xC0) == 0x80; };
  const unsigned c = byte(0);
  if (i >= s.size()) return 0;
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) return cont(1) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    const unsigned lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
    return byte(1) >= lo && byte(1) <= hi && cont(2) ? 3 : 0;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    const unsigned lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
    return byte(1) >= lo && byte(1) <= hi && cont(2) && cont(3) ? 4 : 0;
  }
  return 0;
}

// U+FFFD, what a byte that is no character becomes where text must be valid.
inline constexpr std::string_view kUtf8Replacement = "\xEF\xBF\xBD";

}  // namespace trialdb
