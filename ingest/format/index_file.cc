#include "ingest/format/index_file.h"

#include <locale.h>

#include <array>
#include <cmath>
#include <cstdlib>
#include <cstring>

namespace trialdb {

bool parse_index_path(std::string_view path, int64_t* step, std::string* worker) {
  size_t slash = path.rfind('/');
  std::string_view base = slash == std::string_view::npos ? path : path.substr(slash + 1);
  constexpr std::string_view kExt = ".json";
  if (base.size() < 12 + 1 + 1 + kExt.size() || base.substr(base.size() - kExt.size()) != kExt) return false;
  int64_t s = 0;
  for (int i = 0; i < 12; ++i) {
    if (base[i] < '0' || base[i] > '9') return false;
    s = s * 10 + (base[i] - '0');
  }
  if (base[12] != '_') return false;
  *step = s;
  *worker = std::string(base.substr(13, base.size() - 13 - kExt.size()));
  return !worker->empty();
}

bool is_safe_relative_path(std::string_view p) {
  if (p.empty() || p.front() == '/' || p.find('\\') != std::string_view::npos ||
      p.find('\0') != std::string_view::npos || (p.size() > 1 && p[1] == ':'))
    return false;
  size_t i = 0;
  while (i <= p.size()) {
    size_t j = p.find('/', i);
    if (j == std::string_view::npos) j = p.size();
    std::string_view part = p.substr(i, j - i);
    if (part == ".." || part == "." || part.empty()) return false;
    i = j + 1;
  }
  return true;
}

// parse_index_json is a single-pass scanner for exactly this document shape, with no DOM: an
// index of many small tensors is parsed once per (step, worker), and an nlohmann::json tree costs
// a map node and a string per key and a variant per value (bench/README.md, "Small tensors").
// Its reference is the plain reading of that DOM, kept as the oracle of
// tests/ingest/format/index_json_test.cc: it accepts and rejects exactly what
// nlohmann::json::parse (3.11, strict, no comments) does, and reads the document as the oracle
// reads the DOM:
//   - the whole text must be valid JSON before any field is looked at (an unfinished file is
//     "not valid JSON", which the ingester treats as "not written yet");
//   - a UTF-8 BOM is skipped; a NUL byte after the top-level value ends the input; strings are
//     checked for well-formed UTF-8 and escapes decoded (\uXXXX with surrogate pairs) before keys
//     are compared or names stored;
//   - a repeated key means its last value (nlohmann::json's std::map keeps the last one);
//   - an integer field is valid when it is integer-shaped and the DOM's int64 view of it is
//     >= 0: "-0" counts as 0, 2^63 and above do not (uint64 wrapped negative, or a float), and
//     "1.0"/"1e2" are floats; a number that overflows a double makes the document invalid.
// Unknown keys and values of any nesting are validated and skipped without recursion.
namespace {

// How a byte inside a string is handled: kPlain is copied as is and keeps the fast loop going.
enum : uint8_t { kPlain = 0, kQuote, kBackslash, kControl, kHigh };
constexpr std::array<uint8_t, 256> kStringClass = [] {
  std::array<uint8_t, 256> t{};
  for (int c = 0; c < 0x20; ++c) t[c] = kControl;
  for (int c = 0x80; c < 0x100; ++c) t[c] = kHigh;
  t['"'] = kQuote;
  t['\\'] = kBackslash;
  return t;
}();

inline bool is_digit(char c) { return c >= '0' && c <= '9'; }

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

void append_utf8(std::string* s, uint32_t cp) {
  if (cp < 0x80) {
    s->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    s->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    s->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    s->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    s->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    s->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    s->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    s->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    s->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    s->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

// A number as nlohmann::json's DOM holds it, reduced to what the index needs.
struct Number {
  bool nonneg_int = false;  // integer-shaped and the DOM's int64 view of it is >= 0
  int64_t value = 0;
};

// Whether a float-shaped number is finite as a double. Parsed in the C locale (nlohmann uses the
// current locale's decimal point, which comes to the same).
bool finite_double(const char* b, const char* e) {
  static const locale_t c_locale = newlocale(LC_ALL_MASK, "C", locale_t{});
  std::string tok(b, e);
  return std::isfinite(strtod_l(tok.c_str(), nullptr, c_locale));
}

class Scanner {
 public:
  explicit Scanner(std::string_view text) : p_(text.data()), end_(text.data() + text.size()) {}

  // A UTF-8 BOM is skipped; a lone 0xEF is an error, as in nlohmann's lexer.
  bool bom() {
    if (p_ == end_ || static_cast<uint8_t>(*p_) != 0xEF) return true;
    if (end_ - p_ < 3 || static_cast<uint8_t>(p_[1]) != 0xBB || static_cast<uint8_t>(p_[2]) != 0xBF) return false;
    p_ += 3;
    return true;
  }
  void ws() {
    while (p_ < end_ && (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t')) ++p_;
  }
  // Next byte after whitespace, or 0 at the end (never a valid place for a value either way).
  char peek() {
    ws();
    return p_ < end_ ? *p_ : '\0';
  }
  // After the top-level value: only whitespace, then the end or a NUL (nlohmann's lexer takes
  // '\0' as the end of input and ignores what follows).
  bool at_end() { return peek() == '\0'; }

  // A string at p_ (on '"'). *out views the decoded text: the input itself when there are no
  // escapes (the usual case: no copy), else *scratch. scratch == nullptr only validates.
  bool string(std::string_view* out, std::string* scratch) {
    const char* s = ++p_;
    for (;;) {
      while (p_ < end_ && kStringClass[static_cast<uint8_t>(*p_)] == kPlain) ++p_;
      if (p_ == end_) return false;
      switch (kStringClass[static_cast<uint8_t>(*p_)]) {
        case kQuote:
          if (out) *out = std::string_view(s, static_cast<size_t>(p_ - s));
          ++p_;
          return true;
        case kHigh:
          if (!utf8()) return false;
          continue;
        case kBackslash: return escaped_string(s, out, scratch);
        default: return false;  // a raw control character
      }
    }
  }

  // A number at p_ (on '-' or a digit), in JSON's grammar.
  bool number(Number* n) {
    const char* s = p_;
    const bool neg = *p_ == '-';
    if (neg) ++p_;
    if (p_ == end_ || !is_digit(*p_)) return false;
    const char* d0 = p_;
    if (*p_ == '0') ++p_;
    else
      while (p_ < end_ && is_digit(*p_)) ++p_;
    const char* d1 = p_;
    bool is_float = false;
    if (p_ < end_ && *p_ == '.') {
      ++p_;
      if (p_ == end_ || !is_digit(*p_)) return false;
      while (p_ < end_ && is_digit(*p_)) ++p_;
      is_float = true;
    }
    if (p_ < end_ && (*p_ == 'e' || *p_ == 'E')) {
      ++p_;
      if (p_ < end_ && (*p_ == '+' || *p_ == '-')) ++p_;
      if (p_ == end_ || !is_digit(*p_)) return false;
      while (p_ < end_ && is_digit(*p_)) ++p_;
      is_float = true;
    }
    n->nonneg_int = false;
    if (!is_float) {
      const size_t digits = static_cast<size_t>(d1 - d0);
      if (digits <= 19) {  // < 10^19: no uint64 overflow
        uint64_t v = 0;
        for (const char* q = d0; q < d1; ++q) v = v * 10 + static_cast<uint64_t>(*q - '0');
        // The DOM keeps 2^63..2^64-1 as uint64, whose int64 view is negative; of the negatives
        // only "-0" is >= 0.
        if (v <= static_cast<uint64_t>(INT64_MAX) && (!neg || v == 0)) {
          n->nonneg_int = true;
          n->value = static_cast<int64_t>(v);
        }
        return true;
      }
      // Past 64 bits the DOM falls back to a double, finite below ~10^308.
      if (digits < 300) return true;
    }
    return finite_double(s, p_);
  }

  // Validates and skips any value, iteratively (a hostile file may nest arbitrarily deep, as
  // nlohmann's own parser allows). stack_ holds the closing bracket of each open container.
  bool skip_value() {
    const size_t base = stack_.size();
    for (;;) {
      // A value is expected here.
      switch (peek()) {
        case '{':
          ++p_;
          if (peek() == '}') {
            ++p_;
            break;
          }
          stack_.push_back('}');
          if (!key_colon(nullptr)) return false;
          continue;
        case '[':
          ++p_;
          if (peek() == ']') {
            ++p_;
            break;
          }
          stack_.push_back(']');
          continue;
        case '"':
          if (!string(nullptr, nullptr)) return false;
          break;
        case 't':
          if (!literal("true")) return false;
          break;
        case 'f':
          if (!literal("false")) return false;
          break;
        case 'n':
          if (!literal("null")) return false;
          break;
        default: {
          Number n;
          if (p_ == end_ || (*p_ != '-' && !is_digit(*p_)) || !number(&n)) return false;
          break;
        }
      }
      // After a value: close containers until one continues with ','.
      for (;;) {
        if (stack_.size() == base) return true;
        const char c = peek();
        if (c == ',') {
          ++p_;
          if (stack_.back() == '}' && !key_colon(nullptr)) return false;
          break;
        }
        if (c != stack_.back() || p_ == end_) return false;
        ++p_;
        stack_.pop_back();
      }
    }
  }

  // The members of an object at p_ (on '{'): on_member(key) is called with p_ on the value (after
  // whitespace) and must consume it.
  template <class F>
  bool members(F&& on_member) {
    ++p_;
    if (peek() == '}') return ++p_, true;
    for (;;) {
      std::string_view key;
      if (!key_colon(&key) || (ws(), p_ == end_) || !on_member(key)) return false;
      const char c = peek();
      if (c != ',') {
        if (c != '}') return false;  // peek() gives '\0' at the end, never a bracket
        ++p_;
        return true;
      }
      ++p_;
    }
  }

  // The elements of an array at p_ (on '['): on_element() with p_ on the element.
  template <class F>
  bool elements(F&& on_element) {
    ++p_;
    if (peek() == ']') return ++p_, true;
    for (;;) {
      if (!on_element()) return false;
      const char c = peek();
      if (c != ',') {
        if (c != ']') return false;  // peek() gives '\0' at the end, never a bracket
        ++p_;
        return true;
      }
      ++p_;
    }
  }

 private:
  // `"key"` then ':'; *key (decoded) when wanted.
  bool key_colon(std::string_view* key) {
    if (peek() != '"' || !string(key, key ? &key_scratch_ : nullptr)) return false;
    if (peek() != ':') return false;
    ++p_;
    return true;
  }

  bool literal(const char* word) {
    const size_t n = std::strlen(word);
    if (static_cast<size_t>(end_ - p_) < n || std::memcmp(p_, word, n) != 0) return false;
    p_ += n;
    return true;
  }

  // One UTF-8 sequence at p_ (lead byte >= 0x80), well-formed per RFC 3629 as nlohmann checks it.
  bool utf8() {
    const uint8_t b0 = static_cast<uint8_t>(*p_);
    int n = 2;
    uint8_t lo = 0x80, hi = 0xBF;  // range of the first continuation byte
    if (b0 >= 0xC2 && b0 <= 0xDF) n = 1;
    else if (b0 == 0xE0) lo = 0xA0;
    else if ((b0 >= 0xE1 && b0 <= 0xEC) || b0 == 0xEE || b0 == 0xEF) {
    } else if (b0 == 0xED) hi = 0x9F;  // no UTF-16 surrogates
    else if (b0 == 0xF0) n = 3, lo = 0x90;
    else if (b0 >= 0xF1 && b0 <= 0xF3) n = 3;
    else if (b0 == 0xF4) n = 3, hi = 0x8F;  // nothing above U+10FFFF
    else return false;
    if (end_ - p_ <= n) return false;
    const uint8_t b1 = static_cast<uint8_t>(p_[1]);
    if (b1 < lo || b1 > hi) return false;
    for (int i = 2; i <= n; ++i)
      if ((static_cast<uint8_t>(p_[i]) & 0xC0) != 0x80) return false;
    p_ += n + 1;
    return true;
  }

  bool hex4(uint32_t* cp) {
    if (end_ - p_ < 4) return false;
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) {
      const int h = hex_value(p_[i]);
      if (h < 0) return false;
      v = v << 4 | static_cast<uint32_t>(h);
    }
    p_ += 4;
    *cp = v;
    return true;
  }

  // The rest of a string from its first backslash (p_), decoding into *scratch when wanted.
  bool escaped_string(const char* s, std::string_view* out, std::string* scratch) {
    if (scratch) scratch->assign(s, static_cast<size_t>(p_ - s));
    for (;;) {
      const char* run = p_;
      while (p_ < end_ && kStringClass[static_cast<uint8_t>(*p_)] == kPlain) ++p_;
      if (scratch) scratch->append(run, static_cast<size_t>(p_ - run));
      if (p_ == end_) return false;
      switch (kStringClass[static_cast<uint8_t>(*p_)]) {
        case kQuote:
          ++p_;
          if (out) *out = scratch ? std::string_view(*scratch) : std::string_view();
          return true;
        case kHigh: {
          const char* b = p_;
          if (!utf8()) return false;
          if (scratch) scratch->append(b, static_cast<size_t>(p_ - b));
          continue;
        }
        case kBackslash: break;
        default: return false;
      }
      if (++p_ == end_) return false;
      char c = *p_++;
      switch (c) {
        case '"':
        case '\\':
        case '/': break;
        case 'b': c = '\b'; break;
        case 'f': c = '\f'; break;
        case 'n': c = '\n'; break;
        case 'r': c = '\r'; break;
        case 't': c = '\t'; break;
        case 'u': {
          uint32_t cp;
          if (!hex4(&cp)) return false;
          if (cp >= 0xDC00 && cp <= 0xDFFF) return false;  // a low surrogate first
          if (cp >= 0xD800 && cp <= 0xDBFF) {
            uint32_t low;
            if (end_ - p_ < 2 || p_[0] != '\\' || p_[1] != 'u') return false;
            p_ += 2;
            if (!hex4(&low) || low < 0xDC00 || low > 0xDFFF) return false;
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
          }
          if (scratch) append_utf8(scratch, cp);
          continue;
        }
        default: return false;
      }
      if (scratch) scratch->push_back(c);
    }
  }

  const char* p_;
  const char* end_;
  std::string key_scratch_;  // decoded keys that had escapes
  std::string stack_;        // skip_value's open containers
};

// One entry of tensor_payload or shape_payload while it is read; repeated keys overwrite.
struct Entry {
  enum NameState : uint8_t { kNoName, kNotString, kName } name_state = kNoName;
  std::string_view name;
  bool start_ok = false, length_ok = false;
  uint64_t start = 0, length = 0;
  bool shape_array = false;  // "shape" is an array
  bool shape_bad_dim = false;
  size_t shape_count = 0;
  int64_t dims[kMaxDims];
};

// Whether the entry's tensorname is usable, as the reference reading judges it; *why says what is
// wrong with it.
bool valid_name(const Entry& e, const char* list, size_t i, std::string* why) {
  auto where = [&] { return std::string("index ") + list + " entry " + std::to_string(i); };
  if (e.name_state == Entry::kNoName) return *why = where() + " has no tensorname", false;
  if (e.name_state == Entry::kNotString) return *why = where() + " has a tensorname that is not a string", false;
  if (e.name.empty()) return *why = where() + " has an empty tensorname", false;
  // A NUL would end the name in every C string that shows it (SQLite's text, terminals).
  if (e.name.find('\0') != std::string_view::npos) return *why = where() + " has a tensorname containing U+0000", false;
  if (e.name.size() > kMaxTensorNameBytes)
    return *why = where() + " has a tensorname of " + std::to_string(e.name.size()) + " bytes (the limit is " +
                  std::to_string(kMaxTensorNameBytes) + ")",
           false;
  return true;
}

enum class Field : uint8_t { kAbsent, kNull, kWrongType, kPresent };

}  // namespace

Status parse_index_json(std::string_view text, IndexFile* out) {
  static_assert(kMaxDims == 32, "index shapes are limited to 32 dimensions like tensors");
  Scanner s(text);
  const size_t tensors0 = out->tensors.size(), shapes0 = out->shapes.size(), skipped0 = out->skipped.size();
  auto fail = [&](std::string why) {
    out->tensors.resize(tensors0);
    out->shapes.resize(shapes0);
    out->skipped.resize(skipped0);
    return Status::invalid(std::move(why));
  };

  // What the document says, gathered in one pass; judged afterwards in the reference reading's
  // order, so the first error reported is the same.
  Field meta = Field::kAbsent, tensor_payload = Field::kAbsent, shape_payload = Field::kAbsent;
  bool mode_ok = false, mode_step_ok = false;
  Mode mode = Mode::kGlobal;
  Number mode_step;
  Field event_file = Field::kAbsent;
  std::string event_file_name;
  std::vector<std::string> shape_skipped;   // reported after tensor_payload's (reference order)
  std::string value_scratch, name_scratch;  // decoded strings that had escapes
  Entry e;

  // One element of tensor_payload (shapes == false) or shape_payload (true).
  auto entry = [&](bool shapes, size_t i) -> bool {
    e.name_state = Entry::kNoName;
    e.start_ok = e.length_ok = e.shape_array = false;
    if (s.peek() == '{') {
      bool ok = s.members([&](std::string_view key) -> bool {
        const char c = s.peek();
        if (key == "tensorname") {
          if (c != '"') return e.name_state = Entry::kNotString, s.skip_value();
          e.name_state = Entry::kName;
          return s.string(&e.name, &name_scratch);
        }
        if (!shapes && (key == "start_idx" || key == "length")) {
          Number n;
          bool& ok_flag = key[0] == 's' ? e.start_ok : e.length_ok;
          ok_flag = false;
          if (c != '-' && !is_digit(c)) return s.skip_value();
          if (!s.number(&n)) return false;
          ok_flag = n.nonneg_int;
          (key[0] == 's' ? e.start : e.length) = static_cast<uint64_t>(n.value);
          return true;
        }
        if (shapes && key == "shape") {
          e.shape_array = c == '[';
          if (!e.shape_array) return s.skip_value();
          e.shape_count = 0;
          e.shape_bad_dim = false;
          return s.elements([&]() -> bool {
            const char d = s.peek();
            Number n;
            if (d == '-' || is_digit(d)) {
              if (!s.number(&n)) return false;
            } else if (!s.skip_value()) {
              return false;
            }
            if (!n.nonneg_int) e.shape_bad_dim = true;
            else if (e.shape_count < kMaxDims) e.dims[e.shape_count] = n.value;
            ++e.shape_count;
            return true;
          });
        }
        return s.skip_value();
      });
      if (!ok) return false;
    } else if (!s.skip_value()) {
      return false;
    }
    std::string why;
    if (!shapes) {
      if (!valid_name(e, "tensor_payload", i, &why)) {
        out->skipped.push_back(std::move(why));  // one bad entry costs only that tensor
      } else if (!e.start_ok || !e.length_ok) {
        out->skipped.push_back("index entry for '" + std::string(e.name) + "' has no valid start_idx/length");
      } else {
        out->tensors.push_back(IndexEntry{std::string(e.name), e.start, e.length});
      }
    } else {
      if (!valid_name(e, "shape_payload", i, &why)) {
        shape_skipped.push_back(std::move(why));
      } else if (!e.shape_array || e.shape_count > kMaxDims) {
        shape_skipped.push_back("index shape_payload entry for '" + std::string(e.name) + "' has no valid shape");
      } else if (e.shape_bad_dim) {
        shape_skipped.push_back("index shape for '" + std::string(e.name) +
                                "' has a non-integer or negative dimension");
      } else {
        ShapeEntry& se = out->shapes.emplace_back();
        se.tensor.assign(e.name.data(), e.name.size());
        se.shape.assign(e.dims, e.dims + e.shape_count);
      }
    }
    return true;
  };

  // tensor_payload / shape_payload: an array of entries, null, or something else. A repeated key
  // replaces what the earlier one added.
  auto payload = [&](bool shapes, Field* state) -> bool {
    if (shapes) {
      out->shapes.resize(shapes0);
      shape_skipped.clear();
    } else {
      out->tensors.resize(tensors0);
      out->skipped.resize(skipped0);
    }
    const char c = s.peek();
    if (c != '[') {
      *state = c == 'n' ? Field::kNull : Field::kWrongType;
      return s.skip_value();
    }
    *state = Field::kPresent;
    size_t i = 0;
    return s.elements([&] { return entry(shapes, i++); });
  };

  auto meta_member = [&](std::string_view key) -> bool {
    const char c = s.peek();
    if (key == "mode") {
      mode_ok = false;
      if (c != '"') return s.skip_value();
      std::string_view v;
      if (!s.string(&v, &value_scratch)) return false;
      mode_ok = parse_mode(v, &mode);
      return true;
    }
    if (key == "mode_step") {
      mode_step = Number();
      if (c != '-' && !is_digit(c)) return s.skip_value();
      return s.number(&mode_step);
    }
    if (key == "event_file_name") {
      if (c != '"') {
        event_file = c == 'n' ? Field::kNull : Field::kWrongType;
        return s.skip_value();
      }
      std::string_view v;
      if (!s.string(&v, &value_scratch)) return false;
      event_file = Field::kPresent;
      event_file_name.assign(v.data(), v.size());
      return true;
    }
    return s.skip_value();
  };

  const char* kInvalid = "index file is not valid JSON";
  if (!s.bom()) return fail(kInvalid);
  if (s.peek() != '{') {
    if (!s.skip_value() || !s.at_end()) return fail(kInvalid);
    return fail("index file is not a JSON object");
  }
  bool ok = s.members([&](std::string_view key) -> bool {
    if (key == "tensor_payload") return payload(false, &tensor_payload);
    if (key == "shape_payload") return payload(true, &shape_payload);
    if (key == "meta") {
      // A repeated "meta" replaces the earlier object entirely.
      mode_ok = false;
      mode_step = Number();
      event_file = Field::kAbsent;
      if (s.peek() != '{') return meta = Field::kWrongType, s.skip_value();
      meta = Field::kPresent;
      return s.members(meta_member);
    }
    return s.skip_value();
  });
  if (!ok || !s.at_end()) return fail(kInvalid);
  mode_step_ok = mode_step.nonneg_int;

  if (meta != Field::kPresent) return fail("index file has no 'meta' object");
  if (!mode_ok) return fail("index meta.mode is missing or not one of TRAIN/EVAL/PREDICT/GLOBAL");
  if (!mode_step_ok) return fail("index meta.mode_step is missing or not a non-negative integer");
  if (event_file == Field::kWrongType) return fail("index meta.event_file_name is not a string");
  if (event_file == Field::kPresent && !is_safe_relative_path(event_file_name))
    return fail("index meta.event_file_name '" + event_file_name.substr(0, 200) + "' points outside the trial");
  if (tensor_payload == Field::kWrongType) return fail("index tensor_payload is not an array");
  if (tensor_payload == Field::kPresent && !out->tensors.empty() && !out->event_file && event_file != Field::kPresent)
    return fail("index lists tensors but meta has no event_file_name");
  if (shape_payload == Field::kWrongType) return fail("index shape_payload is not an array");

  out->mode = mode;
  out->mode_step = mode_step.value;
  if (event_file == Field::kPresent) out->event_file = std::move(event_file_name);
  for (auto& why : shape_skipped) out->skipped.push_back(std::move(why));
  return Status::ok();
}

}  // namespace trialdb
