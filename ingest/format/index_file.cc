#include "ingest/format/index_file.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <utility>

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

// parse_index_json reads the document with nlohmann::json::sax_parse (strict, no comments): no
// DOM is built (a map node and a string per key, a variant per value), and the SAX handler keeps
// only what the index needs, gathered in one pass and judged afterwards in the order a reading of
// nlohmann::json's DOM looks at it (the oracle of tests/ingest/format/index_json_test.cc):
//   - the whole text must be valid JSON before any field is looked at (an unfinished file is
//     "not valid JSON", which the ingester treats as "not written yet");
//   - a repeated key means its last value (the DOM's std::map kept the last one);
//   - an integer field is valid when it is integer-shaped and the DOM's int64 view of it is
//     >= 0: "-0" counts as 0, 2^63 and above do not (uint64 wrapped negative, or a float), and
//     "1.0"/"1e2" are floats.
// Unknown keys and values of any nesting are skipped by counting their depth.
namespace {

// A number as the DOM saw it, reduced to what the index needs.
struct Number {
  bool nonneg_int = false;  // integer-shaped and the DOM's int64 view of it is >= 0
  int64_t value = 0;
};

// One entry of tensor_payload or shape_payload while it is read; repeated keys overwrite.
struct Entry {
  enum NameState : uint8_t { kNoName, kNotString, kName } name_state = kNoName;
  std::string name;
  bool start_ok = false, length_ok = false;
  uint64_t start = 0, length = 0;
  bool shape_array = false;  // "shape" is an array
  bool shape_bad_dim = false;
  size_t shape_count = 0;
  int64_t dims[kMaxDims];
};

// The entry's tensorname judged as the DOM oracle judges it; *why says what is wrong with it.
bool valid_name(const Entry& e, const char* list, size_t i, std::string* why) {
  auto where = [&] { return std::string("index ") + list + " entry " + std::to_string(i); };
  if (e.name_state == Entry::kNoName) return *why = where() + " has no tensorname", false;
  if (e.name_state == Entry::kNotString) return *why = where() + " has a tensorname that is not a string", false;
  if (e.name.empty()) return *why = where() + " has an empty tensorname", false;
  // A NUL would end the name in every C string that shows it (SQLite's text, terminals).
  if (e.name.find('\0') != std::string::npos) return *why = where() + " has a tensorname containing U+0000", false;
  if (e.name.size() > kMaxTensorNameBytes)
    return *why = where() + " has a tensorname of " + std::to_string(e.name.size()) + " bytes (the limit is " +
                  std::to_string(kMaxTensorNameBytes) + ")",
           false;
  return true;
}

enum class Field : uint8_t { kAbsent, kNull, kWrongType, kPresent };

// The SAX handler: what the document says, gathered as nlohmann's parser reports it.
class IndexSax {
 public:
  using json = nlohmann::json;

  explicit IndexSax(IndexFile* out)
      : out_(out), tensors0_(out->tensors.size()), shapes0_(out->shapes.size()), skipped0_(out->skipped.size()) {}

  // What was gathered (meaningful once sax_parse accepted the whole document).
  bool top_is_object = false;
  Field meta = Field::kAbsent, tensor_payload = Field::kAbsent, shape_payload = Field::kAbsent;
  bool mode_ok = false;
  Mode mode = Mode::kGlobal;
  Number mode_step;
  Field event_file = Field::kAbsent;
  std::string event_file_name;
  std::vector<std::string> shape_skipped;  // reported after tensor_payload's, as before

  // nlohmann's SAX interface.
  bool null() { return value(Kind::kNull); }
  bool boolean(bool) { return value(Kind::kOther); }
  bool number_integer(json::number_integer_t v) {  // only negative-signed numbers come here
    number_ = Number{v >= 0, v >= 0 ? v : 0};
    return value(Kind::kNumber);
  }
  bool number_unsigned(json::number_unsigned_t v) {  // 2^63 and above: the DOM's int64 view is negative
    number_ = v <= static_cast<uint64_t>(INT64_MAX) ? Number{true, static_cast<int64_t>(v)} : Number{};
    return value(Kind::kNumber);
  }
  bool number_float(json::number_float_t, const json::string_t&) {
    number_ = Number{};
    return value(Kind::kNumber);
  }
  bool string(json::string_t& s) {
    string_ = &s;
    return value(Kind::kString);
  }
  bool binary(json::binary_t&) { return value(Kind::kOther); }
  bool start_object(std::size_t) { return value(Kind::kObject); }
  bool start_array(std::size_t) { return value(Kind::kArray); }
  bool end_object() { return end(); }
  bool end_array() { return end(); }
  bool key(json::string_t& k) {
    if (skip_ == 0) stack_.back().key = std::move(k);
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) { return false; }

 private:
  enum class Kind : uint8_t { kNull, kNumber, kString, kObject, kArray, kOther };
  enum class Ctx : uint8_t { kTop, kMeta, kPayload, kEntry, kShape };
  struct Frame {
    Ctx ctx;
    bool shapes = false;  // kPayload, kEntry: shape_payload rather than tensor_payload
    size_t i = 0;         // kPayload: the element being read
    std::string key;      // objects: the member being read
  };

  // A value of `kind` begins (a scalar: is also complete) where the top frame says.
  bool value(Kind kind) {
    if (skip_ > 0) {
      if (kind == Kind::kObject || kind == Kind::kArray) ++skip_;
      return true;
    }
    if (stack_.empty()) {  // the top-level value
      top_is_object = kind == Kind::kObject;
      return top_is_object ? push(Ctx::kTop) : skip_if_container(kind);
    }
    Frame& f = stack_.back();
    switch (f.ctx) {
      case Ctx::kTop:
        if (f.key == "tensor_payload" || f.key == "shape_payload") {
          const bool shapes = f.key[0] == 's';
          Field* state = shapes ? &shape_payload : &tensor_payload;
          // A repeated key replaces what the earlier one added.
          if (shapes) {
            out_->shapes.resize(shapes0_);
            shape_skipped.clear();
          } else {
            out_->tensors.resize(tensors0_);
            out_->skipped.resize(skipped0_);
          }
          if (kind != Kind::kArray) {
            *state = kind == Kind::kNull ? Field::kNull : Field::kWrongType;
            return skip_if_container(kind);
          }
          *state = Field::kPresent;
          return push(Ctx::kPayload, shapes);
        }
        if (f.key == "meta") {
          // A repeated "meta" replaces the earlier object entirely.
          mode_ok = false;
          mode_step = Number();
          event_file = Field::kAbsent;
          if (kind != Kind::kObject) {
            meta = Field::kWrongType;
            return skip_if_container(kind);
          }
          meta = Field::kPresent;
          return push(Ctx::kMeta);
        }
        return skip_if_container(kind);
      case Ctx::kMeta:
        if (f.key == "mode") {
          mode_ok = kind == Kind::kString && parse_mode(*string_, &mode);
        } else if (f.key == "mode_step") {
          mode_step = kind == Kind::kNumber ? number_ : Number();
        } else if (f.key == "event_file_name") {
          if (kind == Kind::kString) {
            event_file = Field::kPresent;
            event_file_name = std::move(*string_);
          } else {
            event_file = kind == Kind::kNull ? Field::kNull : Field::kWrongType;
          }
        }
        return skip_if_container(kind);
      case Ctx::kPayload: {  // one element of tensor_payload or shape_payload
        e_.name_state = Entry::kNoName;
        e_.start_ok = e_.length_ok = e_.shape_array = false;
        if (kind == Kind::kObject) return push(Ctx::kEntry, f.shapes);
        if (kind == Kind::kArray) return skip_if_container(kind);  // judged when it ends
        element_done(f);
        return true;
      }
      case Ctx::kEntry:
        if (f.key == "tensorname") {
          if (kind == Kind::kString) {
            e_.name_state = Entry::kName;
            e_.name = std::move(*string_);
          } else {
            e_.name_state = Entry::kNotString;
          }
        } else if (!f.shapes && (f.key == "start_idx" || f.key == "length")) {
          const bool start = f.key[0] == 's';
          (start ? e_.start_ok : e_.length_ok) = kind == Kind::kNumber && number_.nonneg_int;
          if (kind == Kind::kNumber) (start ? e_.start : e_.length) = static_cast<uint64_t>(number_.value);
        } else if (f.shapes && f.key == "shape") {
          e_.shape_array = kind == Kind::kArray;
          if (e_.shape_array) {
            e_.shape_count = 0;
            e_.shape_bad_dim = false;
            return push(Ctx::kShape);
          }
        }
        return skip_if_container(kind);
      case Ctx::kShape:
        if (kind != Kind::kNumber || !number_.nonneg_int) e_.shape_bad_dim = true;
        else if (e_.shape_count < kMaxDims) e_.dims[e_.shape_count] = number_.value;
        ++e_.shape_count;
        return skip_if_container(kind);
    }
    return true;
  }

  bool end() {
    if (skip_ > 0) {
      // A skipped element of a payload is judged (as an entry without a name) once it ends.
      if (--skip_ == 0 && !stack_.empty() && stack_.back().ctx == Ctx::kPayload) element_done(stack_.back());
      return true;
    }
    const Ctx ended = stack_.back().ctx;
    stack_.pop_back();
    if (ended == Ctx::kEntry) element_done(stack_.back());
    return true;
  }

  bool push(Ctx ctx, bool shapes = false) {
    stack_.push_back(Frame{ctx, shapes, 0, {}});
    return true;
  }
  bool skip_if_container(Kind kind) {
    if (kind == Kind::kObject || kind == Kind::kArray) skip_ = 1;
    return true;
  }

  // Element payload.i of a payload array has been read into e_.
  void element_done(Frame& payload) {
    const size_t i = payload.i++;
    std::string why;
    if (!payload.shapes) {
      if (!valid_name(e_, "tensor_payload", i, &why)) {
        out_->skipped.push_back(std::move(why));  // one bad entry costs only that tensor
      } else if (!e_.start_ok || !e_.length_ok) {
        out_->skipped.push_back("index entry for '" + e_.name + "' has no valid start_idx/length");
      } else {
        out_->tensors.push_back(IndexEntry{e_.name, e_.start, e_.length});
      }
    } else {
      if (!valid_name(e_, "shape_payload", i, &why)) {
        shape_skipped.push_back(std::move(why));
      } else if (!e_.shape_array || e_.shape_count > kMaxDims) {
        shape_skipped.push_back("index shape_payload entry for '" + e_.name + "' has no valid shape");
      } else if (e_.shape_bad_dim) {
        shape_skipped.push_back("index shape for '" + e_.name + "' has a non-integer or negative dimension");
      } else {
        ShapeEntry& se = out_->shapes.emplace_back();
        se.tensor = e_.name;
        se.shape.assign(e_.dims, e_.dims + e_.shape_count);
      }
    }
  }

  IndexFile* const out_;
  const size_t tensors0_, shapes0_, skipped0_;
  std::vector<Frame> stack_;          // the containers being read: at most top, payload, entry, shape
  size_t skip_ = 0;                   // > 0: inside a value being skipped, this many containers deep
  Number number_;                     // the number being reported
  json::string_t* string_ = nullptr;  // the string being reported
  Entry e_;
};

}  // namespace

Status parse_index_json(std::string_view text, IndexFile* out) {
  static_assert(kMaxDims == 32, "index shapes are limited to 32 dimensions like tensors");
  const size_t tensors0 = out->tensors.size(), shapes0 = out->shapes.size(), skipped0 = out->skipped.size();
  auto fail = [&](std::string why) {
    out->tensors.resize(tensors0);
    out->shapes.resize(shapes0);
    out->skipped.resize(skipped0);
    return Status::invalid(std::move(why));
  };

  IndexSax h(out);
  bool ok;
  try {
    ok = nlohmann::json::sax_parse(text.begin(), text.end(), &h, nlohmann::json::input_format_t::json, true, false);
  } catch (const std::exception&) {  // out of memory; sax_parse reports bad JSON through parse_error
    ok = false;
  }
  if (!ok) return fail("index file is not valid JSON");
  if (!h.top_is_object) return fail("index file is not a JSON object");

  if (h.meta != Field::kPresent) return fail("index file has no 'meta' object");
  if (!h.mode_ok) return fail("index meta.mode is missing or not one of TRAIN/EVAL/PREDICT/GLOBAL");
  if (!h.mode_step.nonneg_int) return fail("index meta.mode_step is missing or not a non-negative integer");
  if (h.event_file == Field::kWrongType) return fail("index meta.event_file_name is not a string");
  if (h.event_file == Field::kPresent && !is_safe_relative_path(h.event_file_name))
    return fail("index meta.event_file_name '" + h.event_file_name.substr(0, 200) + "' points outside the trial");
  if (h.tensor_payload == Field::kWrongType) return fail("index tensor_payload is not an array");
  if (h.tensor_payload == Field::kPresent && !out->tensors.empty() && !out->event_file &&
      h.event_file != Field::kPresent)
    return fail("index lists tensors but meta has no event_file_name");
  if (h.shape_payload == Field::kWrongType) return fail("index shape_payload is not an array");

  out->mode = h.mode;
  out->mode_step = h.mode_step.value;
  if (h.event_file == Field::kPresent) out->event_file = std::move(h.event_file_name);
  for (auto& why : h.shape_skipped) out->skipped.push_back(std::move(why));
  return Status::ok();
}

}  // namespace trialdb
