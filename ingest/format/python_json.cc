// Python json.dumps-compatible JSON text. See python_json.h.
#include "ingest/format/python_json.h"

namespace trialdb {

namespace {

constexpr std::string_view kItemSeparator = ", ";
constexpr char kHexDigits[] = "0123456789abcdef";
// Python writes only ' ' to '~' as themselves: control characters and DEL are escaped.
constexpr uint32_t kFirstPrintable = 0x20;
constexpr uint32_t kLastPrintable = 0x7E;
constexpr uint32_t kFirstNonAscii = 0x80;
constexpr uint32_t kFirstAstral = 0x10000;  // above the BMP: written as a surrogate pair
constexpr uint32_t kHighSurrogate = 0xD800, kLowSurrogate = 0xDC00;
constexpr uint32_t kSurrogateBits = 10;
constexpr uint32_t kLowSurrogateMask = (1u << kSurrogateBits) - 1;

// "\uXXXX" with lowercase hex digits, as Python writes it.
void append_unicode_escape(std::string* out, uint32_t code_unit) {
  const char escape[6] = {'\\',
                          'u',
                          kHexDigits[(code_unit >> 12) & 15],
                          kHexDigits[(code_unit >> 8) & 15],
                          kHexDigits[(code_unit >> 4) & 15],
                          kHexDigits[code_unit & 15]};
  out->append(escape, sizeof escape);
}

// The short escape Python uses for c, or nullptr when it has none.
const char* short_escape(char c) {
  switch (c) {
    case '"': return "\\\"";
    case '\\': return "\\\\";
    case '\n': return "\\n";
    case '\r': return "\\r";
    case '\t': return "\\t";
    case '\b': return "\\b";
    case '\f': return "\\f";
    default: return nullptr;
  }
}

// Length of the UTF-8 sequence a lead byte starts, 0 for a byte that cannot start one.
int utf8_sequence_length(unsigned char lead) {
  if (lead >= 0xF0) return 4;
  if (lead >= 0xE0) return 3;
  if (lead >= 0xC0) return 2;
  return 0;
}

// Decodes the UTF-8 sequence at s[i]; false when it is cut short or malformed.
bool decode_utf8(std::string_view s, size_t i, int length, uint32_t* code_point) {
  if (length == 0 || i + length > s.size()) return false;
  constexpr unsigned char kContinuationTag = 0x80, kContinuationTagMask = 0xC0, kPayloadMask = 0x3F;
  uint32_t cp = static_cast<unsigned char>(s[i]) & (0x7F >> length);  // the lead byte's payload
  for (int k = 1; k < length; ++k) {
    const unsigned char c = static_cast<unsigned char>(s[i + k]);
    if ((c & kContinuationTagMask) != kContinuationTag) return false;
    cp = (cp << 6) | (c & kPayloadMask);
  }
  *code_point = cp;
  return true;
}

}  // namespace

void append_python_json_string(std::string* out, std::string_view s) {
  out->push_back('"');
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < kFirstNonAscii) {
      if (const char* escape = short_escape(static_cast<char>(c))) out->append(escape);
      else if (c < kFirstPrintable || c > kLastPrintable) append_unicode_escape(out, c);
      else out->push_back(static_cast<char>(c));
      ++i;
      continue;
    }
    const int length = utf8_sequence_length(c);
    uint32_t cp = 0;
    if (!decode_utf8(s, i, length, &cp)) {
      append_unicode_escape(out, c);
      ++i;
      continue;
    }
    if (cp >= kFirstAstral) {
      cp -= kFirstAstral;
      append_unicode_escape(out, kHighSurrogate + (cp >> kSurrogateBits));
      append_unicode_escape(out, kLowSurrogate + (cp & kLowSurrogateMask));
    } else {
      append_unicode_escape(out, cp);
    }
    i += length;
  }
  out->push_back('"');
}

void append_python_json_int_list(std::string* out, const std::vector<int64_t>& values) {
  out->push_back('[');
  for (size_t i = 0; i < values.size(); ++i) {
    if (i) out->append(kItemSeparator);
    out->append(std::to_string(values[i]));
  }
  out->push_back(']');
}

void append_python_json_string_list(std::string* out, const std::vector<std::string>& values) {
  out->push_back('[');
  for (size_t i = 0; i < values.size(); ++i) {
    if (i) out->append(kItemSeparator);
    append_python_json_string(out, values[i]);
  }
  out->push_back(']');
}

const char* python_json_bool(bool value) { return value ? "true" : "false"; }

}  // namespace trialdb
