// parse_index_json (a hand-written scanner, no DOM) against explicit expectations on tricky
// input and against a plain reading of nlohmann::json's DOM, kept here as an oracle only: both must
// accept and reject the same documents with the same error, and agree on every field, entry and
// skip message, on generated documents (escapes, unicode, duplicate keys, wrong types, nested
// unknown values, huge numbers) and on byte-level mutations of them (truncation, stray bytes).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "ingest/format/index_file.h"

using namespace trialdb;

namespace {

// ---- The oracle: a plain reading of the index with nlohmann::json's DOM. ----
using nlohmann::json;

bool dom_get_uint(const json& o, const char* key, uint64_t* out) {
  auto it = o.find(key);
  if (it == o.end() || !it->is_number_integer() || it->get<int64_t>() < 0) return false;
  *out = it->get<uint64_t>();
  return true;
}
bool dom_valid_name(const json& e, const char* list, size_t i, std::string* why) {
  std::string where = std::string("index ") + list + " entry " + std::to_string(i);
  auto it = e.is_object() ? e.find("tensorname") : e.end();
  if (!e.is_object() || it == e.end()) return *why = where + " has no tensorname", false;
  if (!it->is_string()) return *why = where + " has a tensorname that is not a string", false;
  size_t n = it->get_ref<const std::string&>().size();
  if (n == 0) return *why = where + " has an empty tensorname", false;
  if (it->get_ref<const std::string&>().find('\0') != std::string::npos)
    return *why = where + " has a tensorname containing U+0000", false;
  if (n > kMaxTensorNameBytes)
    return *why = where + " has a tensorname of " + std::to_string(n) + " bytes (the limit is " +
                  std::to_string(kMaxTensorNameBytes) + ")",
           false;
  return true;
}
Status dom_parse_index_json(std::string_view text, IndexFile* out) {
  json doc = json::parse(text.begin(), text.end(), nullptr, false);
  if (doc.is_discarded()) return Status::invalid("index file is not valid JSON");
  if (!doc.is_object()) return Status::invalid("index file is not a JSON object");
  auto meta = doc.find("meta");
  if (meta == doc.end() || !meta->is_object()) return Status::invalid("index file has no 'meta' object");
  auto mode = meta->find("mode");
  if (mode == meta->end() || !mode->is_string() || !parse_mode(mode->get<std::string>(), &out->mode))
    return Status::invalid("index meta.mode is missing or not one of TRAIN/EVAL/PREDICT/GLOBAL");
  auto ms = meta->find("mode_step");
  if (ms == meta->end() || !ms->is_number_integer() || ms->get<int64_t>() < 0)
    return Status::invalid("index meta.mode_step is missing or not a non-negative integer");
  out->mode_step = ms->get<int64_t>();
  auto ef = meta->find("event_file_name");
  if (ef != meta->end() && !ef->is_null()) {
    if (!ef->is_string()) return Status::invalid("index meta.event_file_name is not a string");
    std::string name = ef->get<std::string>();
    if (!is_safe_relative_path(name))
      return Status::invalid("index meta.event_file_name '" + name.substr(0, 200) + "' points outside the trial");
    out->event_file = name;
  }
  if (auto tp = doc.find("tensor_payload"); tp != doc.end() && !tp->is_null()) {
    if (!tp->is_array()) return Status::invalid("index tensor_payload is not an array");
    for (size_t i = 0; i < tp->size(); ++i) {
      const json& e = (*tp)[i];
      IndexEntry ie;
      std::string why;
      if (!dom_valid_name(e, "tensor_payload", i, &why)) {
        out->skipped.push_back(std::move(why));
        continue;
      }
      ie.tensor = e["tensorname"].get<std::string>();
      if (!dom_get_uint(e, "start_idx", &ie.start) || !dom_get_uint(e, "length", &ie.length)) {
        out->skipped.push_back("index entry for '" + ie.tensor + "' has no valid start_idx/length");
        continue;
      }
      out->tensors.push_back(std::move(ie));
    }
    if (!out->tensors.empty() && !out->event_file)
      return Status::invalid("index lists tensors but meta has no event_file_name");
  }
  if (auto sp = doc.find("shape_payload"); sp != doc.end() && !sp->is_null()) {
    if (!sp->is_array()) return Status::invalid("index shape_payload is not an array");
    for (size_t i = 0; i < sp->size(); ++i) {
      const json& e = (*sp)[i];
      ShapeEntry se;
      std::string why;
      if (!dom_valid_name(e, "shape_payload", i, &why)) {
        out->skipped.push_back(std::move(why));
        continue;
      }
      se.tensor = e["tensorname"].get<std::string>();
      auto sh = e.find("shape");
      if (sh == e.end() || !sh->is_array() || sh->size() > 32) {
        out->skipped.push_back("index shape_payload entry for '" + se.tensor + "' has no valid shape");
        continue;
      }
      bool ok = true;
      for (const auto& d : *sh) {
        if (!d.is_number_integer() || d.get<int64_t>() < 0) {
          out->skipped.push_back("index shape for '" + se.tensor + "' has a non-integer or negative dimension");
          ok = false;
          break;
        }
        se.shape.push_back(d.get<int64_t>());
      }
      if (ok) out->shapes.push_back(std::move(se));
    }
  }
  return Status::ok();
}

// ---- Comparison ----
struct Result {
  bool ok = false;
  std::string err;
  IndexFile idx;
};
Result parse(std::string_view text) {
  Result r;
  const Status st = parse_index_json(text, &r.idx);
  r.ok = st.is_ok();
  r.err = st.cause();
  EXPECT_TRUE(r.ok || st.kind() == ErrorKind::kInvalidInput) << st.to_string();
  return r;
}
Result dom_parse(std::string_view text) {
  Result r;
  const Status st = dom_parse_index_json(text, &r.idx);
  r.ok = st.is_ok();
  r.err = st.cause();
  return r;
}
std::string printable(std::string_view s) {
  std::string o;
  for (unsigned char c : s) {
    if (c >= 0x20 && c < 0x7f) {
      o += static_cast<char>(c);
    } else {
      char b[8];
      snprintf(b, sizeof b, "\\x%02x", c);
      o += b;
    }
  }
  return o.size() > 3000 ? o.substr(0, 3000) + "..." : o;
}
// Empty when both parsers agree, else what differs.
std::string differ(const Result& a, const Result& b) {
  if (a.ok != b.ok)
    return "ok " + std::to_string(a.ok) + " vs " + std::to_string(b.ok) + " (" + a.err + " | " + b.err + ")";
  if (!a.ok) return a.err == b.err ? "" : "err '" + a.err + "' vs '" + b.err + "'";
  if (a.idx.mode != b.idx.mode) return "mode";
  if (a.idx.mode_step != b.idx.mode_step) return "mode_step";
  if (a.idx.event_file != b.idx.event_file) return "event_file";
  if (a.idx.tensors.size() != b.idx.tensors.size()) return "tensor count";
  for (size_t i = 0; i < a.idx.tensors.size(); ++i) {
    const auto &x = a.idx.tensors[i], &y = b.idx.tensors[i];
    if (x.tensor != y.tensor || x.start != y.start || x.length != y.length) return "tensor " + std::to_string(i);
  }
  if (a.idx.shapes.size() != b.idx.shapes.size()) return "shape count";
  for (size_t i = 0; i < a.idx.shapes.size(); ++i)
    if (a.idx.shapes[i].tensor != b.idx.shapes[i].tensor || a.idx.shapes[i].shape != b.idx.shapes[i].shape)
      return "shape " + std::to_string(i);
  if (a.idx.skipped != b.idx.skipped) {
    std::string s = "skipped:";
    for (auto& m : a.idx.skipped) s += " [" + m + "]";
    s += " vs";
    for (auto& m : b.idx.skipped) s += " [" + m + "]";
    return s;
  }
  return "";
}
#define EXPECT_SAME_AS_DOM(text)                                  \
  do {                                                            \
    std::string t_ = (text);                                      \
    std::string d_ = differ(parse(t_), dom_parse(t_));            \
    EXPECT_TRUE(d_.empty()) << d_ << "\n  on: " << printable(t_); \
  } while (0)

const std::string kMeta = R"("meta": {"mode": "TRAIN", "mode_step": 3, "event_file_name": "events/e.tfevents"})";
std::string doc_with_tensor(const std::string& entry) {
  return "{" + kMeta + R"(, "tensor_payload": [)" + entry + "]}";
}
std::string doc_with_shape(const std::string& entry) { return "{" + kMeta + R"(, "shape_payload": [)" + entry + "]}"; }

// ---- Explicit expectations ----

TEST(IndexJson, SmdebugLayoutParses) {
  Result r = parse(
      R"({"meta": {"mode": "TRAIN", "mode_step": 3, "event_file_name": "events/000000000003/000000000003_worker_0.tfevents"}, )"
      R"("tensor_payload": [{"tensorname": "Net_conv0.weight", "start_idx": 0, "length": 330}, )"
      R"({"tensorname": "loss", "start_idx": 330, "length": 91}], )"
      R"("shape_payload": [{"tensorname": "grad/x", "originalname": "grad/x", "shape": [100, 0, 7]}]})");
  ASSERT_TRUE(r.ok) << r.err;
  EXPECT_EQ(r.idx.mode, Mode::kTrain);
  EXPECT_EQ(r.idx.mode_step, 3);
  EXPECT_EQ(*r.idx.event_file, "events/000000000003/000000000003_worker_0.tfevents");
  ASSERT_EQ(r.idx.tensors.size(), 2u);
  EXPECT_EQ(r.idx.tensors[1].tensor, "loss");
  EXPECT_EQ(r.idx.tensors[1].start, 330u);
  EXPECT_EQ(r.idx.tensors[1].length, 91u);
  ASSERT_EQ(r.idx.shapes.size(), 1u);
  EXPECT_EQ(r.idx.shapes[0].shape, (std::vector<int64_t>{100, 0, 7}));
  EXPECT_TRUE(r.idx.skipped.empty());
}

TEST(IndexJson, EscapesAndUnicodeInNamesDecode) {
  // Python's json.dumps (ensure_ascii) writes non-ASCII as \u escapes, astral planes as pairs.
  Result r = parse(doc_with_tensor(
      R"({"tensorname": "a\"b\\c\/d\n\t\b\f\r\u00e9\u65E5\ud834\udd1ez", "start_idx": 1, "length": 20},)"
      "{\"tensorname\": \"raw \xc3\xa9\xe6\x97\xa5\xf0\x9d\x84\x9e\x7f\", \"start_idx\": 2, \"length\": 20},"
      R"({"tensorname": "nul\u0000z", "start_idx": 3, "length": 20})"));
  ASSERT_TRUE(r.ok) << r.err;
  ASSERT_EQ(r.idx.tensors.size(), 2u);
  EXPECT_EQ(r.idx.tensors[0].tensor, "a\"b\\c/d\n\t\b\f\r\xc3\xa9\xe6\x97\xa5\xf0\x9d\x84\x9ez");
  EXPECT_EQ(r.idx.tensors[1].tensor, "raw \xc3\xa9\xe6\x97\xa5\xf0\x9d\x84\x9e\x7f");
  // A NUL would cut the name short wherever it is shown: that entry alone is refused.
  EXPECT_EQ(r.idx.skipped, std::vector<std::string>{"index tensor_payload entry 2 has a tensorname containing U+0000"});
  // Keys are compared decoded.
  r = parse(
      R"({"m\u0065ta": {"mode": "EVAL", "mode_step": 1}, "sh\u0061pe_payload": [{"tensor\u006eame": "x", "shape": []}]})");
  ASSERT_TRUE(r.ok) << r.err;
  EXPECT_EQ(r.idx.mode, Mode::kEval);
  ASSERT_EQ(r.idx.shapes.size(), 1u);
  EXPECT_TRUE(r.idx.shapes[0].shape.empty());
}

TEST(IndexJson, MalformedStringsMakeTheFileInvalid) {
  for (const char* bad : {R"("\ud834")", R"("\udd1e")", R"("\ud834\u0041")", R"("\ud834x")", R"("\u12g4")", R"("\u12")",
                          R"("\x")", "\"tab\there\"", "\"\xc3\x28\"", "\"\xc0\xaf\"", "\"\xed\xa0\x80\"",
                          "\"\xf4\x90\x80\x80\"", "\"\xf8\x88\x80\x80\x80\"", "\"\xe6\x97\"", "\"\x80\"", "\"abc"}) {
    std::string doc = doc_with_tensor(std::string(R"({"tensorname": )") + bad + R"(, "start_idx": 0, "length": 20})");
    Result r = parse(doc);
    EXPECT_FALSE(r.ok) << printable(doc);
    EXPECT_EQ(r.err, "index file is not valid JSON");
    EXPECT_SAME_AS_DOM(doc);
    // The same in an unknown field, and as a key.
    EXPECT_SAME_AS_DOM("{" + kMeta + ", \"other\": [" + bad + "]}");
    EXPECT_SAME_AS_DOM("{" + kMeta + ", " + bad + ": 1}");
  }
}

TEST(IndexJson, IntegerRulesMatchTheDom) {
  auto entry = [](const std::string& start) {
    return parse(doc_with_tensor(R"({"tensorname": "t", "start_idx": )" + start + R"(, "length": 20})"));
  };
  Result r = entry("-0");
  ASSERT_TRUE(r.ok);
  ASSERT_EQ(r.idx.tensors.size(), 1u);  // the DOM read -0 as the integer 0
  EXPECT_EQ(r.idx.tensors[0].start, 0u);
  r = entry("9223372036854775807");
  ASSERT_EQ(r.idx.tensors.size(), 1u);
  EXPECT_EQ(r.idx.tensors[0].start, 9223372036854775807u);
  for (const char* skip :
       {"-1", "9223372036854775808", "18446744073709551615", "18446744073709551616", "-9223372036854775809", "1.0",
        "1e2", "-0.0", "0.5", "1e-400", "\"5\"", "true", "null", "[1]", "{}", "123456789012345678901234567890"}) {
    r = entry(skip);
    ASSERT_TRUE(r.ok) << skip << ": " << r.err;
    EXPECT_TRUE(r.idx.tensors.empty()) << skip;
    ASSERT_EQ(r.idx.skipped.size(), 1u) << skip;
    EXPECT_EQ(r.idx.skipped[0], "index entry for 't' has no valid start_idx/length");
  }
  // A number a double cannot hold made the whole document invalid, wherever it is.
  for (const std::string& bad :
       std::vector<std::string>{"1e400", "-1e400", "1" + std::string(400, '0'), "-" + std::string(320, '9') + ".5"}) {
    r = entry(bad);
    EXPECT_FALSE(r.ok) << bad;
    EXPECT_EQ(r.err, "index file is not valid JSON");
    EXPECT_SAME_AS_DOM("{" + kMeta + R"(, "x": {"y": [)" + bad + "]}}");
  }
  for (const char* bad : {"01", "+1", ".5", "1.", "1e", "1e+", "-", "--1", "0x10", "1.e5", "NaN", "Infinity"}) {
    r = entry(bad);
    EXPECT_FALSE(r.ok) << bad;
    EXPECT_SAME_AS_DOM(
        doc_with_tensor(R"({"tensorname": "t", "start_idx": )" + std::string(bad) + R"(, "length": 20})"));
  }
  // mode_step and shape dimensions follow the same rules.
  EXPECT_TRUE(parse(R"({"meta": {"mode": "TRAIN", "mode_step": -0}})").ok);
  EXPECT_FALSE(parse(R"({"meta": {"mode": "TRAIN", "mode_step": 9223372036854775808}})").ok);
  EXPECT_FALSE(parse(R"({"meta": {"mode": "TRAIN", "mode_step": 3.0}})").ok);
  r = parse(doc_with_shape(R"({"tensorname": "s", "shape": [1, 2.0]})"));
  ASSERT_EQ(r.idx.skipped.size(), 1u);
  EXPECT_EQ(r.idx.skipped[0], "index shape for 's' has a non-integer or negative dimension");
}

TEST(IndexJson, RepeatedKeysTakeTheLastValue) {
  Result r =
      parse(R"({"meta": {"mode": "EVAL", "mode_step": 1}, "meta": {"mode": "TRAIN", "mode": "PREDICT", "mode_step": 7},
      "tensor_payload": [{"tensorname": "dropped", "start_idx": 0, "length": 20}, 5],
      "tensor_payload": [{"tensorname": "a", "tensorname": "b", "start_idx": "x", "start_idx": 4, "length": 20}],
      "shape_payload": [{"tensorname": "s", "shape": [1], "shape": "no"}]})");
  ASSERT_FALSE(r.ok);  // the second meta has no event_file_name, and tensors are listed
  EXPECT_EQ(r.err, "index lists tensors but meta has no event_file_name");
  std::string doc =
      R"({"meta": {"mode": "EVAL", "mode_step": 1}, "meta": {"mode": "TRAIN", "mode": "PREDICT", "mode_step": 7, "event_file_name": "e"},
      "tensor_payload": [{"tensorname": "dropped", "start_idx": 0, "length": 20}, 5],
      "tensor_payload": [{"tensorname": "a", "tensorname": "b", "start_idx": "x", "start_idx": 4, "length": 20}],
      "shape_payload": [{"tensorname": "s", "shape": [1], "shape": "no"}]})";
  r = parse(doc);
  ASSERT_TRUE(r.ok) << r.err;
  EXPECT_EQ(r.idx.mode, Mode::kPredict);
  EXPECT_EQ(r.idx.mode_step, 7);
  ASSERT_EQ(r.idx.tensors.size(), 1u);
  EXPECT_EQ(r.idx.tensors[0].tensor, "b");
  EXPECT_EQ(r.idx.tensors[0].start, 4u);
  ASSERT_EQ(r.idx.skipped.size(), 1u);  // the first tensor_payload's bad entry is gone with it
  EXPECT_EQ(r.idx.skipped[0], "index shape_payload entry for 's' has no valid shape");
  EXPECT_SAME_AS_DOM(doc);
  // A later null or non-array replaces an earlier array.
  EXPECT_SAME_AS_DOM(
      doc_with_tensor(R"({"tensorname": "t", "start_idx": 0, "length": 20})").insert(1, R"("tensor_payload": 1, )"));
  r = parse(
      R"({"tensor_payload": [{"tensorname": "t", "start_idx": 0, "length": 20}], "meta": {"mode": "TRAIN", "mode_step": 0}, "tensor_payload": null})");
  ASSERT_TRUE(r.ok) << r.err;
  EXPECT_TRUE(r.idx.tensors.empty());
}

TEST(IndexJson, MissingFieldsAndWrongTypes) {
  struct Case {
    const char* doc;
    const char* err;
  };
  for (
      const Case& c : std::vector<Case>{
          {"[]", "index file is not a JSON object"},
          {"\"meta\"", "index file is not a JSON object"},
          {"null", "index file is not a JSON object"},
          {"{}", "index file has no 'meta' object"},
          {R"({"meta": null})", "index file has no 'meta' object"},
          {R"({"meta": [1]})", "index file has no 'meta' object"},
          {R"({"meta": {"mode_step": 0}})", "index meta.mode is missing or not one of TRAIN/EVAL/PREDICT/GLOBAL"},
          {R"({"meta": {"mode": "train", "mode_step": 0}})",
           "index meta.mode is missing or not one of TRAIN/EVAL/PREDICT/GLOBAL"},
          {R"({"meta": {"mode": 1, "mode_step": 0}})",
           "index meta.mode is missing or not one of TRAIN/EVAL/PREDICT/GLOBAL"},
          {R"({"meta": {"mode": "TRAIN"}})", "index meta.mode_step is missing or not a non-negative integer"},
          {R"({"meta": {"mode": "TRAIN", "mode_step": "1"}})",
           "index meta.mode_step is missing or not a non-negative integer"},
          {R"({"meta": {"mode": "TRAIN", "mode_step": 0, "event_file_name": 5}})",
           "index meta.event_file_name is not a string"},
          {R"({"meta": {"mode": "TRAIN", "mode_step": 0, "event_file_name": "/etc/passwd"}})",
           "index meta.event_file_name '/etc/passwd' points outside the trial"},
          {R"({"meta": {"mode": "TRAIN", "mode_step": 0}, "tensor_payload": {}})",
           "index tensor_payload is not an array"},
          {R"({"meta": {"mode": "TRAIN", "mode_step": 0, "event_file_name": null}, "tensor_payload": [{"tensorname": "t", "start_idx": 0, "length": 1}]})",
           "index lists tensors but meta has no event_file_name"},
          {R"({"meta": {"mode": "TRAIN", "mode_step": 0}, "shape_payload": "x"})",
           "index shape_payload is not an array"},
      }) {
    Result r = parse(c.doc);
    EXPECT_FALSE(r.ok) << c.doc;
    EXPECT_EQ(r.err, c.err) << c.doc;
    EXPECT_SAME_AS_DOM(c.doc);
  }
  // The message carries the decoded name, NUL included.
  const char* nul = R"({"meta": {"mode": "TRAIN", "mode_step": 0, "event_file_name": "a\u0000b"}})";
  EXPECT_EQ(parse(nul).err, std::string("index meta.event_file_name 'a\0b' points outside the trial", 57));
  EXPECT_SAME_AS_DOM(nul);
  // Null payloads and a null event_file_name without tensors are fine.
  Result r = parse(
      R"({"meta": {"mode": "GLOBAL", "mode_step": 0, "event_file_name": null}, "tensor_payload": null, "shape_payload": null})");
  ASSERT_TRUE(r.ok) << r.err;
  EXPECT_EQ(r.idx.mode, Mode::kGlobal);
  EXPECT_FALSE(r.idx.event_file);
  // An empty tensor_payload needs no event file.
  EXPECT_TRUE(parse(R"({"meta": {"mode": "TRAIN", "mode_step": 0}, "tensor_payload": []})").ok);
}

TEST(IndexJson, MalformedEntriesAreSkippedInOrder) {
  std::string long_name(kMaxTensorNameBytes, 'n');
  // 4096 bytes decoded from 6-byte escapes is at the limit; one more is over it.
  std::string escaped_limit;
  for (size_t i = 0; i < kMaxTensorNameBytes; ++i) escaped_limit += "\\u0041";
  std::string doc =
      R"({"shape_payload": [7, {"tensorname": "s33", "shape": [)" +
      [] {
        std::string dims;
        for (int i = 0; i < 33; ++i) dims += (i ? ",-1" : "-1");  // too many dims wins over bad dims
        return dims;
      }() +
      R"(]}, {"tensorname": "s", "shape": [1, -1]}, {"tensorname": "ok", "shape": [2, 3]}, {"tensorname": "ns"}],
  "meta": {"mode": "TRAIN", "mode_step": 0, "event_file_name": "e"},
  "tensor_payload": [[], {"start_idx": 0, "length": 1}, {"tensorname": 3, "start_idx": 0, "length": 1},
    {"tensorname": "", "start_idx": 0, "length": 1}, {"tensorname": ")" +
      long_name + R"(", "start_idx": 0, "length": 1},
    {"tensorname": ")" +
      long_name + R"(x", "start_idx": 0, "length": 1},
    {"tensorname": ")" +
      escaped_limit + R"(", "start_idx": 0, "length": 1},
    {"tensorname": ")" +
      escaped_limit + R"(\u00e9", "start_idx": 0, "length": 1},
    {"tensorname": "nolen", "start_idx": 0}, {"tensorname": "t", "start_idx": 0, "length": 1, "extra": {"a": [{"b": []}]}}]})";
  Result r = parse(doc);
  ASSERT_TRUE(r.ok) << r.err;
  ASSERT_EQ(r.idx.tensors.size(), 3u);
  EXPECT_EQ(r.idx.tensors[0].tensor, long_name);
  EXPECT_EQ(r.idx.tensors[1].tensor, std::string(kMaxTensorNameBytes, 'A'));
  EXPECT_EQ(r.idx.tensors[2].tensor, "t");
  std::vector<std::string> want = {
      "index tensor_payload entry 0 has no tensorname",
      "index tensor_payload entry 1 has no tensorname",
      "index tensor_payload entry 2 has a tensorname that is not a string",
      "index tensor_payload entry 3 has an empty tensorname",
      "index tensor_payload entry 5 has a tensorname of 4097 bytes (the limit is 4096)",
      "index tensor_payload entry 7 has a tensorname of 4098 bytes (the limit is 4096)",
      "index entry for 'nolen' has no valid start_idx/length",
      "index shape_payload entry 0 has no tensorname",
      "index shape_payload entry for 's33' has no valid shape",
      "index shape for 's' has a non-integer or negative dimension",
      "index shape_payload entry for 'ns' has no valid shape",
  };
  EXPECT_EQ(r.idx.skipped, want);
  ASSERT_EQ(r.idx.shapes.size(), 1u);
  EXPECT_EQ(r.idx.shapes[0].shape, (std::vector<int64_t>{2, 3}));
  EXPECT_SAME_AS_DOM(doc);
}

TEST(IndexJson, WhitespaceBomNulAndTrailingBytes) {
  const std::string body =
      R"({"meta":{"mode":"TRAIN","mode_step":0,"event_file_name":"e"},"tensor_payload":[{"tensorname":"t","start_idx":0,"length":20}]})";
  // Every place whitespace may go.
  std::string spaced;
  bool in_string = false;
  for (char c : body) {
    if (!in_string && std::strchr("{}[]:,\"", c)) spaced += " \t\r\n";
    if (c == '"') in_string = !in_string;
    spaced += c;
  }
  spaced += "\n\t ";
  for (const std::string& ok : std::vector<std::string>{
           body, spaced, "\xEF\xBB\xBF" + body, body + std::string("\0garbage", 8), body + std::string(" \n\0", 3)}) {
    Result r = parse(ok);
    EXPECT_TRUE(r.ok) << printable(ok) << ": " << r.err;
    EXPECT_EQ(r.idx.tensors.size(), 1u);
    EXPECT_SAME_AS_DOM(ok);
  }
  for (const std::string& bad :
       std::vector<std::string>{std::string(), std::string(" "), std::string("\0", 1) + body, "\xEF\xBB" + body,
                                "\xEF" + body, " \xEF\xBB\xBF" + body, body + "x", body + "{}", body + ",",
                                "/*c*/" + body, body + "//c", "\v" + body, "\f" + body}) {
    Result r = parse(bad);
    EXPECT_FALSE(r.ok) << printable(bad);
    EXPECT_EQ(r.err, "index file is not valid JSON") << printable(bad);
    EXPECT_SAME_AS_DOM(bad);
  }
}

TEST(IndexJson, EveryTruncationIsInvalid) {
  const std::string doc =
      R"({"meta": {"mode": "TRAIN", "mode_step": 12, "event_file_name": "events/e"}, "tensor_payload": [{"tensorname": "a\u00e9\ud834\udd1e", "start_idx": 0, "length": 20}, {"tensorname": "b", "start_idx": 20, "length": 1.5e3, "x": [true, false, null, {}]}], "shape_payload": [{"tensorname": "s", "shape": [1, 2]}]})";
  ASSERT_TRUE(parse(doc).ok);
  for (size_t n = 0; n < doc.size(); ++n) {
    Result r = parse(std::string_view(doc).substr(0, n));
    EXPECT_FALSE(r.ok) << n;
    EXPECT_EQ(r.err, "index file is not valid JSON") << n;
  }
}

TEST(IndexJson, DeeplyNestedUnknownValuesAreSkipped) {
  const int depth = 100000;  // no recursion: this must not exhaust the stack
  std::string nest;
  for (int i = 0; i < depth; ++i) nest += i % 2 ? "{\"k\":" : "[";
  nest += "1";
  for (int i = depth - 1; i >= 0; --i) nest += i % 2 ? "}" : "]";
  Result r = parse(R"({"meta": {"mode": "TRAIN", "mode_step": 0, "junk": )" + nest + R"(}, "more": )" + nest + "}");
  EXPECT_TRUE(r.ok) << r.err;
  // Mismatched brackets are caught at any depth.
  std::string bad = nest;
  bad[bad.size() - 2] = bad[bad.size() - 2] == '}' ? ']' : '}';
  EXPECT_FALSE(parse(R"({"meta": {"mode": "TRAIN", "mode_step": 0}, "more": )" + bad + "}").ok);
}

TEST(IndexJson, ReusedOutputKeepsAppending) {
  // The ingester uses a fresh IndexFile; a reused one keeps appending, as with the oracle,
  // and a failed parse adds nothing.
  IndexFile idx;
  const std::string doc = doc_with_tensor(R"({"tensorname": "t", "start_idx": 0, "length": 20}, 1)");
  ASSERT_TRUE(parse_index_json(doc, &idx).is_ok());
  ASSERT_TRUE(parse_index_json(doc, &idx).is_ok());
  EXPECT_EQ(idx.tensors.size(), 2u);
  EXPECT_EQ(idx.skipped.size(), 2u);
  EXPECT_FALSE(parse_index_json(doc + "x", &idx).is_ok());
  EXPECT_EQ(idx.tensors.size(), 2u);
  EXPECT_EQ(idx.skipped.size(), 2u);
}

// ---- Generated documents against the oracle ----

class DocGen {
 public:
  explicit DocGen(uint64_t seed) : rng_(seed) {}

  std::string doc() {
    std::vector<std::string> members;
    if (pct(95)) members.push_back(kv("meta", meta()));
    if (pct(4)) members.push_back(kv("meta", value(2)));
    if (pct(85)) members.push_back(kv("tensor_payload", payload(false)));
    if (pct(50)) members.push_back(kv("shape_payload", payload(true)));
    if (pct(30)) members.push_back(kv(pick_key(), value(3)));
    if (pct(8)) members.push_back(kv("tensor_payload", pct(50) ? std::string("null") : value(2)));
    std::shuffle(members.begin(), members.end(), rng_);
    return (pct(5) ? "\xEF\xBB\xBF" : "") + ws() + object(members) + ws();
  }

  // Byte-level damage: truncation, deletion, insertion, replacement.
  std::string mutate(std::string s) {
    static const char kBytes[] = {'"',    '\\',   ',',    '}', ']', '{', '[', ':', '\0',
                                  '\xff', '\xc3', '\xed', 'x', ' ', '0', '-', 'e', '.'};
    int n = 1 + static_cast<int>(rng_() % 3);
    for (int i = 0; i < n && !s.empty(); ++i) {
      size_t at = rng_() % s.size();
      switch (rng_() % 4) {
        case 0: s.resize(at); break;
        case 1: s.erase(at, 1); break;
        case 2: s.insert(s.begin() + static_cast<long>(at), kBytes[rng_() % sizeof kBytes]); break;
        default: s[at] = kBytes[rng_() % sizeof kBytes]; break;
      }
    }
    return s;
  }

 private:
  bool pct(int p) { return static_cast<int>(rng_() % 100) < p; }
  template <class T>
  const T& one(const std::vector<T>& v) {
    return v[rng_() % v.size()];
  }

  std::string ws() {
    static const std::vector<std::string> kWs = {"", "", "", " ", "\n", "\t", "\r\n  "};
    return one(kWs);
  }
  std::string kv(const std::string& key, const std::string& value) {
    return ws() + encode(key) + ws() + ":" + ws() + value + ws();
  }
  std::string object(const std::vector<std::string>& members) {
    std::string s = "{";
    for (size_t i = 0; i < members.size(); ++i) s += (i ? "," : "") + members[i];
    return s + (members.empty() ? ws() : "") + "}";
  }
  std::string array(const std::vector<std::string>& elements) {
    std::string s = "[";
    for (size_t i = 0; i < elements.size(); ++i) s += (i ? "," : "") + ws() + elements[i] + ws();
    return s + "]";
  }

  // A JSON string literal for `raw` (UTF-8), escaped in one of several ways per character.
  std::string encode(std::string_view raw) {
    std::string o = "\"";
    const int style = static_cast<int>(rng_() % 4);  // 0: plain, 1: some \u, 2: all \u, 3: mixed
    for (size_t i = 0; i < raw.size();) {
      unsigned char c = static_cast<unsigned char>(raw[i]);
      uint32_t cp = c;
      size_t n = 1;
      if (c >= 0xF0) cp = c & 7, n = 4;
      else if (c >= 0xE0) cp = c & 15, n = 3;
      else if (c >= 0xC0) cp = c & 31, n = 2;
      for (size_t k = 1; k < n; ++k) cp = cp << 6 | (static_cast<unsigned char>(raw[i + k]) & 0x3F);
      const bool must = c < 0x20 || c == '"' || c == '\\';
      const bool esc = must || style == 2 || (style == 1 && cp >= 0x80) || (style == 3 && pct(30));
      if (!esc) {
        o.append(raw.substr(i, n));
      } else if (c == '"' || c == '\\') {
        o += '\\';
        o += static_cast<char>(c);
      } else if (c == '\n' && pct(50)) {
        o += "\\n";
      } else if (c == '/' && pct(50)) {
        o += "\\/";
      } else {
        char b[16];
        if (cp >= 0x10000) {
          uint32_t v = cp - 0x10000;
          snprintf(b, sizeof b, pct(50) ? "\\u%04x\\u%04x" : "\\u%04X\\u%04X", 0xD800 + (v >> 10),
                   0xDC00 + (v & 0x3FF));
        } else {
          snprintf(b, sizeof b, pct(50) ? "\\u%04x" : "\\u%04X", cp);
        }
        o += b;
      }
      i += n;
    }
    return o + "\"";
  }

  std::string pick_key() {
    static const std::vector<std::string> kKeys = {
        "meta",          "mode",       "mode_step", "event_file_name", "tensor_payload",
        "shape_payload", "tensorname", "start_idx", "length",          "shape",
        "originalname",  "x",          "",          "tensorname\x01",  "Shape"};
    return one(kKeys);
  }
  std::string name() {
    static const std::vector<std::string> kNames = {"loss",
                                                    "Net_conv0.weight",
                                                    "gradients/dense/kernel:0",
                                                    "",
                                                    "a\"b\\c",
                                                    "tab\there",
                                                    "slash/ok",
                                                    "caf\xc3\xa9",
                                                    "\xe6\x97\xa5\xe6\x9c\xac",
                                                    "clef \xf0\x9d\x84\x9e",
                                                    std::string("nul\0in", 6),
                                                    "\x7f",
                                                    "smdebug/reductions/abs_mean/w",
                                                    std::string(4096, 'w'),
                                                    std::string(4097, 'w')};
    return one(kNames);
  }
  std::string number() {
    static const std::vector<std::string> kNumbers = {"0",
                                                      "-0",
                                                      "1",
                                                      "42",
                                                      "330",
                                                      "-1",
                                                      "9223372036854775807",
                                                      "9223372036854775808",
                                                      "18446744073709551615",
                                                      "18446744073709551616",
                                                      "-9223372036854775808",
                                                      "-9223372036854775809",
                                                      "1.0",
                                                      "1e2",
                                                      "-0.0",
                                                      "1E+2",
                                                      "0.5",
                                                      "2.5e-3",
                                                      "1e-400",
                                                      "123456789012345678901234567890",
                                                      "1e400",
                                                      "1" + std::string(310, '0')};
    // Mostly ordinary offsets; the odd ones, including those that overflow a double, rarely.
    if (pct(85)) return std::to_string(rng_() % 100000);
    return one(kNumbers);
  }
  std::string value(int depth) {
    switch (rng_() % (depth > 0 ? 8 : 6)) {
      case 0: return number();
      case 1: return encode(name());
      case 2: return "true";
      case 3: return "false";
      case 4: return "null";
      case 5: return encode(pct(50) ? "TRAIN" : "events/x");
      case 6: {
        std::vector<std::string> v;
        for (int i = static_cast<int>(rng_() % 4); i > 0; --i) v.push_back(value(depth - 1));
        return array(v);
      }
      default: {
        std::vector<std::string> m;
        for (int i = static_cast<int>(rng_() % 4); i > 0; --i) m.push_back(kv(pick_key(), value(depth - 1)));
        return object(m);
      }
    }
  }
  std::string meta() {
    static const std::vector<std::string> kModes = {"TRAIN", "EVAL", "PREDICT", "GLOBAL", "train", ""};
    static const std::vector<std::string> kFiles = {"events/000000000003/000000000003_worker_0.tfevents",
                                                    "e",
                                                    "../x",
                                                    "/abs",
                                                    "a//b",
                                                    "a\\b",
                                                    "caf\xc3\xa9/e",
                                                    std::string("a\0b", 3)};
    std::vector<std::string> m;
    if (pct(97)) m.push_back(kv("mode", pct(95) ? encode(pct(85) ? "TRAIN" : one(kModes)) : value(1)));
    if (pct(97)) m.push_back(kv("mode_step", pct(95) ? number() : value(1)));
    if (pct(90)) m.push_back(kv("event_file_name", pct(95) ? encode(pct(80) ? kFiles[0] : one(kFiles)) : value(1)));
    if (pct(10)) m.push_back(kv(pick_key(), value(2)));
    if (pct(5)) m.push_back(kv("mode", encode(one(kModes))));
    std::shuffle(m.begin(), m.end(), rng_);
    return object(m);
  }
  std::string entry(bool shapes) {
    if (pct(4)) return value(2);
    std::vector<std::string> m;
    if (pct(93)) m.push_back(kv("tensorname", pct(92) ? encode(name()) : value(1)));
    if (!shapes || pct(10)) {
      if (pct(95)) m.push_back(kv("start_idx", pct(92) ? number() : value(1)));
      if (pct(95)) m.push_back(kv("length", pct(92) ? number() : value(1)));
    }
    if (shapes || pct(5)) {
      if (pct(5)) m.push_back(kv("originalname", encode(name())));
      if (pct(93)) {
        std::vector<std::string> dims;
        int n = pct(5) ? 30 + static_cast<int>(rng_() % 5) : static_cast<int>(rng_() % 5);
        for (int i = 0; i < n; ++i)
          dims.push_back(pct(95) ? std::to_string(rng_() % 1000) : (pct(50) ? number() : value(1)));
        m.push_back(kv("shape", array(dims)));
      } else {
        m.push_back(kv("shape", value(1)));
      }
    }
    if (pct(8)) m.push_back(kv(pick_key(), value(2)));
    std::shuffle(m.begin(), m.end(), rng_);
    return object(m);
  }
  std::string payload(bool shapes) {
    if (pct(5)) return value(2);
    std::vector<std::string> v;
    for (int i = static_cast<int>(rng_() % 6); i > 0; --i) v.push_back(entry(shapes));
    return array(v);
  }

  std::mt19937_64 rng_;
};

TEST(IndexJson, AgreesWithTheDomOnGeneratedDocuments) {
  DocGen gen(20240611);
  int accepted = 0, rejected = 0;
  for (int i = 0; i < 6000; ++i) {
    std::string doc = gen.doc();
    Result a = parse(doc), b = dom_parse(doc);
    std::string d = differ(a, b);
    ASSERT_TRUE(d.empty()) << d << "\n  on: " << printable(doc);
    (a.ok ? accepted : rejected)++;
    for (int k = 0; k < 3; ++k) {
      std::string m = gen.mutate(doc);
      d = differ(parse(m), dom_parse(m));
      ASSERT_TRUE(d.empty()) << d << "\n  on: " << printable(m);
    }
  }
  // The generator must exercise both outcomes substantially.
  EXPECT_GT(accepted, 1000);
  EXPECT_GT(rejected, 1000);
}

}  // namespace
