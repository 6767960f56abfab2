#include "ingest/format/tensor_content_split.h"

#include <cstdint>

namespace trialdb {

namespace {

// The field followed at each level, and whether it may repeat there.
constexpr uint32_t kPathField[] = {5, 1, 8, 4};  // summary, value, tensor, tensor_content
constexpr bool kPathRepeated[] = {false, true, false, false};
constexpr int kValueLevel = 2, kContentLevel = 3;

bool read_varint(std::string_view s, size_t* pos, uint64_t* v) {
  uint64_t r = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (*pos >= s.size()) return false;
    const uint8_t b = static_cast<uint8_t>(s[(*pos)++]);
    r |= static_cast<uint64_t>(b & 0x7f) << shift;
    if (!(b & 0x80)) {
      *v = r;
      return true;
    }
  }
  return false;
}

void append_varint(std::string* out, uint64_t v) {
  for (; v >= 0x80; v >>= 7) out->push_back(static_cast<char>(v | 0x80));
  out->push_back(static_cast<char>(v));
}

// Copies the fields of `msg` (a message at `level`) to *out, descending into the path field and
// cutting the content field.
bool strip(std::string_view msg, int level, std::string* out, std::vector<std::string_view>* contents) {
  bool seen = false;
  for (size_t pos = 0; pos < msg.size();) {
    const size_t field_begin = pos;
    uint64_t key;
    if (!read_varint(msg, &pos, &key)) return false;
    const size_t key_end = pos;
    uint64_t len = 0, ignored;
    switch (key & 7) {
      case 0:
        if (!read_varint(msg, &pos, &ignored)) return false;
        break;
      case 1:
        if (msg.size() - pos < 8) return false;
        pos += 8;
        break;
      case 2:
        if (!read_varint(msg, &pos, &len) || len > msg.size() - pos) return false;
        pos += len;
        break;
      case 5:
        if (msg.size() - pos < 4) return false;
        pos += 4;
        break;
      default: return false;  // groups: not written by any TensorFlow writer
    }
    if ((key >> 3) != kPathField[level]) {
      out->append(msg.substr(field_begin, pos - field_begin));
      continue;
    }
    if ((key & 7) != 2 || (seen && !kPathRepeated[level])) return false;
    seen = true;
    const std::string_view payload = msg.substr(pos - len, len);
    if (level == kContentLevel) {
      contents->push_back(payload);
      continue;
    }
    const size_t had = contents->size();
    std::string inner;
    if (!strip(payload, level + 1, &inner, contents)) return false;
    if (level + 1 == kValueLevel && contents->size() == had) contents->push_back({});  // a value without content
    out->append(msg.substr(field_begin, key_end - field_begin));
    append_varint(out, inner.size());
    out->append(inner);
  }
  return true;
}

}  // namespace

bool split_tensor_content(std::string_view event, std::string* stripped, std::vector<std::string_view>* contents) {
  stripped->clear();
  contents->clear();
  if (!strip(event, 0, stripped, contents)) return false;
  for (std::string_view c : *contents)
    if (!c.empty()) return true;
  return false;
}

}  // namespace trialdb
