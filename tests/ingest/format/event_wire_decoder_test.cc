// The hand-written decoder (event_wire_decoder.h) against libprotobuf (decode_event_with_protobuf):
// on the Events smdebug writes, on layouts where libprotobuf's rules decide (later singular fields
// override, messages given twice merge, packed and unpacked repeated fields, unknown fields), on
// every prefix of a record and on every single-byte change of one, decode_event must give what
// libprotobuf gives: the same status and the same tensors, borrowed from the payload or not. And
// the Events smdebug writes must take the hand-written path.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "ingest/format/event_decoder.h"
#include "ingest/format/event_encoder.h"
#include "ingest/format/event_wire_decoder.h"
#include "ingest/format/proto/smdebug_event.pb.h"

using namespace trialdb;

namespace {

// An smdebug tensor Event as smdebug writes it (event_encoder.h): dims named "<tag>_<size>",
// plugin data mode_step then mode.
std::string smdebug_event(const std::string& tag, int64_t step, std::vector<int64_t> shape, int tf_dtype,
                          const std::string& content, Mode mode = Mode::kTrain, int64_t mode_step = 3) {
  const std::string metadata = encode_mode_plugin_metadata(mode, mode_step);
  TensorEvent ev{1.5e9, step, tag, shape, metadata};
  TensorContentFrame frame;
  encode_tensor_content_event(ev, tf_dtype, content.size(), &frame);
  return frame.head + content + frame.trailer;
}

std::string float_bytes(std::initializer_list<float> values) {
  std::string out;
  for (float f : values) out.append(reinterpret_cast<const char*>(&f), 4);
  return out;
}

std::string describe(const Status& st, const std::vector<DecodedTensor>& out) {
  std::string s = st.to_string() + " |";
  for (const DecodedTensor& d : out) {
    s += " [" + d.tag + " " + std::to_string(d.event_step) + " " + std::to_string(d.has_mode) + " " +
         std::to_string(static_cast<int>(d.mode)) + " " + std::to_string(d.mode_step) + " " +
         std::to_string(static_cast<int>(d.dtype)) + " " + std::to_string(d.smdebug_readable) + " (";
    for (int64_t x : d.dims) s += std::to_string(x) + ",";
    s += ") " + std::to_string(d.is_borrowed) + " " + std::string(d.bytes()) + " " + std::string(d.data) + "]";
  }
  return s;
}

// decode_event and the libprotobuf reference agree, borrowing or not; a tensor borrowed points
// into the payload. Returns whether the hand-written path took the payload.
bool expect_agree(const std::string& payload, const std::string& what) {
  for (size_t borrow : {SIZE_MAX, size_t{0}}) {
    std::vector<DecodedTensor> got(1), want(1);  // an entry before: appended to, never touched
    got[0].tag = want[0].tag = "before";
    const Status g = decode_event(payload, &got, borrow);
    const Status w = decode_event_with_protobuf(payload, &want, borrow);
    EXPECT_EQ(describe(g, got), describe(w, want)) << what << " (borrow from " << borrow << ")";
    for (const DecodedTensor& d : got) {
      if (!d.is_borrowed) continue;
      EXPECT_TRUE(d.borrowed.data() >= payload.data() &&
                  d.borrowed.data() + d.borrowed.size() <= payload.data() + payload.size())
          << what;
    }
  }
  std::vector<DecodedTensor> probe;
  return decode_smdebug_event(payload, SIZE_MAX, &probe);
}

std::string serialize(const pb::Event& ev) { return ev.SerializeAsString(); }

// A length-delimited field (wire type 2) as it is written.
std::string length_delimited(int field, const std::string& bytes) {
  std::string out(1, static_cast<char>(field << 3 | 2));
  for (size_t n = bytes.size();; n >>= 7) {
    out.push_back(static_cast<char>(n >= 0x80 ? (n & 0x7f) | 0x80 : n));
    if (n < 0x80) break;
  }
  return out + bytes;
}

pb::Event proto_event() {
  pb::Event ev;
  ev.ParseFromString(smdebug_event("layer/weight", 12, {2, 2}, 1, float_bytes({1, 2, 3, 4}), Mode::kEval, 4));
  return ev;
}

TEST(EventWireDecoder, SmdebugEventsTakeTheHandWrittenPath) {
  const std::vector<std::string> events = {
      smdebug_event("loss", 0, {}, 1, float_bytes({0.25f})),
      smdebug_event("loss", 1234567890123, {}, 2, std::string(8, '\x11'), Mode::kGlobal, -1),
      smdebug_event("gradients/conv1/weight", 7, {3, 1, 2}, 1, float_bytes({1, 2, 3, 4, 5, 6}), Mode::kPredict, 9),
      smdebug_event("ints", 5, {3}, 9, std::string(24, '\x7f')),
      smdebug_event("flags", 5, {2}, 10, std::string("\x01\x00", 2)),
      smdebug_event("empty", 5, {0, 4}, 1, ""),
      smdebug_event("", 0, {1}, 19, std::string("\x00\x3c", 2)),
  };
  for (const std::string& e : events) EXPECT_TRUE(expect_agree(e, "an smdebug event"));
  std::string two = smdebug_event("a", 3, {1}, 1, float_bytes({1}));
  pb::Event both;
  both.ParseFromString(two);
  both.MergeFromString(smdebug_event("b", 3, {2}, 1, float_bytes({2, 3})));  // two values in one summary
  EXPECT_TRUE(expect_agree(serialize(both), "two values"));
}

TEST(EventWireDecoder, LayoutsWhereLibprotobufRulesDecide) {
  std::vector<std::pair<std::string, std::string>> cases;
  const std::string base = serialize(proto_event());
  cases.push_back({"step after the summary", base + std::string("\x10\x05", 2)});
  cases.push_back({"step twice", std::string("\x10\x09", 2) + base});
  cases.push_back({"summary twice (merged)", base + serialize(proto_event())});
  {
    // Inside the one Value: Value.tensor given twice (the two TensorProtos merge, the later
    // dtype overrides), and the tag given twice (the later one wins).
    const std::string value = proto_event().summary().value(0).SerializeAsString();
    const std::string second_tensor = length_delimited(8, std::string("\x08\x02", 2));
    cases.push_back({"tensor twice", length_delimited(5, length_delimited(1, value + second_tensor))});
    cases.push_back({"tag twice", length_delimited(5, length_delimited(1, value + length_delimited(1, "zz")))});
  }
  {
    pb::Event ev = proto_event();
    ev.set_file_version("brain.Event:2");
    cases.push_back({"file_version", serialize(ev)});
    pb::Event typed = proto_event();
    auto* t = typed.mutable_summary()->mutable_value(0)->mutable_tensor();
    t->clear_tensor_content();
    t->add_float_val(1.5f);
    cases.push_back({"typed values broadcast", serialize(typed)});
    t->add_float_val(2.5f);
    cases.push_back({"typed values padded", serialize(typed)});
    // An unpacked float_val (field 5, wire type 5) after the packed ones: three values.
    t->mutable_tensor_shape()->mutable_dim(0)->set_size(3);
    t->mutable_tensor_shape()->mutable_dim(1)->set_size(1);
    pb::Summary::Value value = typed.summary().value(0);
    const std::string tensor = value.tensor().SerializeAsString() + "\x2d" + float_bytes({3.5f});
    value.clear_tensor();
    cases.push_back({"packed and unpacked", length_delimited(5, length_delimited(1, value.SerializeAsString() +
                                                                                        length_delimited(8, tensor)))});
    pb::Event str = proto_event();
    auto* s = str.mutable_summary()->mutable_value(0)->mutable_tensor();
    s->clear_tensor_content();
    s->set_dtype(7);
    for (int i = 0; i < 4; ++i) s->add_string_val("s" + std::to_string(i));
    cases.push_back({"strings", serialize(str)});
    pb::Event scalar;
    scalar.mutable_summary()->add_value()->set_simple_value(2.0f);
    cases.push_back({"simple_value", serialize(scalar)});
    pb::Event utf = proto_event();
    utf.mutable_summary()->mutable_value(0)->set_tag("t\xc3\xa9");
    cases.push_back({"UTF-8 tag", serialize(utf)});
    utf.mutable_summary()->mutable_value(0)->set_tag("t");
    utf.mutable_summary()->mutable_value(0)->mutable_tensor()->mutable_tensor_shape()->set_unknown_rank(true);
    cases.push_back({"unknown rank", serialize(utf)});
  }
  // Raw bytes where a generator cannot go: an invalid UTF-8 tag, a non-canonical varint step, an
  // unknown field, a ten-byte varint with high bits.
  std::string invalid_utf8 = base;
  invalid_utf8.replace(invalid_utf8.find("layer/weight"), 1, "\xff");
  cases.push_back({"invalid UTF-8 tag", invalid_utf8});
  cases.push_back({"non-canonical step", std::string("\x10\x85\x80\x00", 4) + base.substr(base.find('\x2a'))});
  cases.push_back({"unknown field", base + std::string("\x30\x01", 2)});
  cases.push_back({"ten-byte step",
                   std::string("\x10\xff\xff\xff\xff\xff\xff\xff\xff\xff\x7f", 11) + base.substr(base.find('\x2a'))});
  cases.push_back({"ten-byte step, bit 63",
                   std::string("\x10\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 11) + base.substr(base.find('\x2a'))});
  for (const auto& [what, payload] : cases) expect_agree(payload, what);
}

TEST(EventWireDecoder, ShapesAndContentsThatDoNotFit) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"content too short", smdebug_event("t", 1, {3}, 1, float_bytes({1, 2}))},
      {"content on an empty shape", smdebug_event("t", 1, {0}, 1, float_bytes({1}))},
      {"no content, shape of 2", smdebug_event("t", 1, {2}, 1, "")},
      {"negative dimension", smdebug_event("t", 1, {-1}, 1, "")},
      {"unknown dtype", smdebug_event("t", 1, {1}, 99, float_bytes({1}))},
      {"overflowing shape", smdebug_event("t", 1, {INT64_MAX, 4}, 1, float_bytes({1}))},
      {"33 dimensions", smdebug_event("t", 1, std::vector<int64_t>(33, 1), 1, float_bytes({1}))},
      {"32 dimensions", smdebug_event("t", 1, std::vector<int64_t>(32, 1), 1, float_bytes({1}))},
  };
  for (const auto& [what, payload] : cases) expect_agree(payload, what);
}

TEST(EventWireDecoder, EveryPrefixAndEveryByteChanged) {
  const std::string base = smdebug_event("conv/bias", 300, {2}, 1, float_bytes({0.5f, -2}), Mode::kTrain, 150);
  int fast = 0;
  for (size_t n = 0; n <= base.size(); ++n) expect_agree(base.substr(0, n), "prefix of " + std::to_string(n));
  for (size_t i = 0; i < base.size(); ++i)
    for (int b : {0x00, 0x01, 0x02, 0x05, 0x08, 0x0a, 0x10, 0x2a, 0x7f, 0x80, 0xff, base[i] ^ 0x01, base[i] ^ 0x80}) {
      std::string m = base;
      m[i] = static_cast<char>(b);
      fast += expect_agree(m, "byte " + std::to_string(i) + " = " + std::to_string(b));
    }
  EXPECT_GT(fast, 0);  // some changes (the values, the step) stay on the hand-written path
}

}  // namespace
