// split_tensor_content and decode_event's borrowing: a borrowed tensor is the same tensor as a
// copied one, its bytes are the payload's own, every Summary.Value keeps its own content, and
// any layout libprotobuf would merge (or reject) is left to libprotobuf.
#include <gtest/gtest.h>

#include <climits>
#include <cstring>
#include <string>
#include <vector>

#include "ingest/format/event_decoder.h"
#include "ingest/format/proto/smdebug_event.pb.h"
#include "ingest/format/tensor_content_split.h"

using namespace trialdb;

namespace {

std::string floats(int n, float scale) {
  std::string out(static_cast<size_t>(n) * 4, '\0');
  for (int i = 0; i < n; ++i) {
    const float f = static_cast<float>(i) * scale;
    std::memcpy(out.data() + static_cast<size_t>(i) * 4, &f, 4);
  }
  return out;
}

void add_content_value(pb::Event* ev, const std::string& tag, int n, float scale) {
  auto* v = ev->mutable_summary()->add_value();
  v->set_tag(tag);
  auto* pd = v->mutable_metadata()->add_plugin_data();
  pd->set_plugin_name("mode");
  pd->set_content("2");
  auto* t = v->mutable_tensor();
  t->set_dtype(1);
  t->mutable_tensor_shape()->add_dim()->set_size(n);
  t->set_tensor_content(floats(n, scale));
}

// Everything decode_event reports, borrowed or not.
void expect_same(const std::vector<DecodedTensor>& a, const std::vector<DecodedTensor>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].tag, b[i].tag);
    EXPECT_EQ(a[i].event_step, b[i].event_step);
    EXPECT_EQ(a[i].has_mode, b[i].has_mode);
    EXPECT_EQ(a[i].mode, b[i].mode);
    EXPECT_EQ(a[i].mode_step, b[i].mode_step);
    EXPECT_EQ(a[i].dtype, b[i].dtype);
    EXPECT_EQ(a[i].dims, b[i].dims);
    EXPECT_TRUE(a[i].bytes() == b[i].bytes()) << a[i].tag;
  }
}

// Decodes payload with borrowing; it must succeed, and agree with decoding it as written
// (which never borrows).
std::vector<DecodedTensor> decode_borrowing(const std::string& payload) {
  std::vector<DecodedTensor> copied, borrowed;
  Status err;
  EXPECT_TRUE((err = decode_event(payload, &copied)).is_ok()) << err.to_string();
  EXPECT_TRUE((err = decode_event(payload, &borrowed, 0)).is_ok()) << err.to_string();
  expect_same(copied, borrowed);
  for (const DecodedTensor& d : copied) EXPECT_FALSE(d.is_borrowed);
  return borrowed;
}

bool inside(std::string_view part, const std::string& whole) {
  return part.data() >= whole.data() && part.data() + part.size() <= whole.data() + whole.size();
}

TEST(TensorContentSplit, BorrowedTensorIsTheCopiedOneWithoutTheCopy) {
  for (int n : {1, 1000, 16384, 40000, 300000}) {
    pb::Event ev;
    ev.set_step(9);
    add_content_value(&ev, "w", n, 0.5f);
    const std::string payload = ev.SerializeAsString();
    const std::vector<DecodedTensor> borrowed = decode_borrowing(payload);
    ASSERT_EQ(borrowed.size(), 1u);
    EXPECT_TRUE(borrowed[0].is_borrowed);
    EXPECT_TRUE(borrowed[0].data.empty());
    EXPECT_TRUE(inside(borrowed[0].bytes(), payload)) << n;
    EXPECT_EQ(borrowed[0].bytes(), floats(n, 0.5f));
  }
}

TEST(TensorContentSplit, BorrowsOnlyFromPayloadsOfTheGivenSize) {
  pb::Event ev;
  add_content_value(&ev, "w", 1000, 1.0f);
  const std::string payload = ev.SerializeAsString();
  std::vector<DecodedTensor> out;
  Status err;
  ASSERT_TRUE((err = decode_event(payload, &out, payload.size() + 1)).is_ok()) << err.to_string();
  ASSERT_TRUE((err = decode_event(payload, &out, payload.size())).is_ok()) << err.to_string();
  ASSERT_EQ(out.size(), 2u);
  EXPECT_FALSE(out[0].is_borrowed);
  EXPECT_TRUE(out[1].is_borrowed);
}

TEST(TensorContentSplit, EachValueKeepsItsOwnContent) {
  // Content, a TensorBoard scalar, typed values without content, an empty tensor, content again.
  pb::Event ev;
  ev.set_step(4);
  add_content_value(&ev, "first", 5000, 1.0f);
  auto* scalar = ev.mutable_summary()->add_value();
  scalar->set_tag("scalar");
  scalar->set_simple_value(2.5f);
  auto* typed = ev.mutable_summary()->add_value();
  typed->set_tag("typed");
  typed->mutable_tensor()->set_dtype(2);
  typed->mutable_tensor()->mutable_tensor_shape()->add_dim()->set_size(3);
  typed->mutable_tensor()->add_double_val(7.0);
  auto* empty = ev.mutable_summary()->add_value();
  empty->set_tag("empty");
  empty->mutable_tensor()->set_dtype(1);
  empty->mutable_tensor()->mutable_tensor_shape()->add_dim()->set_size(0);
  add_content_value(&ev, "second", 3000, -2.0f);
  const std::string payload = ev.SerializeAsString();

  std::string stripped;
  std::vector<std::string_view> contents;
  ASSERT_TRUE(split_tensor_content(payload, &stripped, &contents));
  ASSERT_EQ(contents.size(), 5u);
  EXPECT_EQ(contents[0], floats(5000, 1.0f));
  EXPECT_TRUE(contents[1].empty() && contents[2].empty() && contents[3].empty());
  EXPECT_EQ(contents[4], floats(3000, -2.0f));
  EXPECT_LT(stripped.size(), 300u);

  // The stripped payload is the event without its contents, field for field.
  pb::Event back;
  ASSERT_TRUE(back.ParseFromString(stripped));
  pb::Event want = ev;
  want.mutable_summary()->mutable_value(0)->mutable_tensor()->clear_tensor_content();
  want.mutable_summary()->mutable_value(4)->mutable_tensor()->clear_tensor_content();
  EXPECT_EQ(back.SerializeAsString(), want.SerializeAsString());

  const std::vector<DecodedTensor> borrowed = decode_borrowing(payload);
  ASSERT_EQ(borrowed.size(), 5u);
  EXPECT_TRUE(borrowed[0].is_borrowed && borrowed[4].is_borrowed);
  EXPECT_FALSE(borrowed[1].is_borrowed || borrowed[2].is_borrowed || borrowed[3].is_borrowed);
}

// A length-delimited field, by hand: layouts SerializeAsString never produces.
std::string len_field(int number, const std::string& payload) {
  std::string out(1, static_cast<char>(number << 3 | 2));
  for (uint64_t n = payload.size();; n >>= 7) {
    out.push_back(static_cast<char>((n & 0x7f) | (n >= 0x80 ? 0x80 : 0)));
    if (n < 0x80) break;
  }
  return out + payload;
}

TEST(TensorContentSplit, LayoutsLibprotobufWouldMergeAreLeftToIt) {
  pb::Event a, b;
  a.set_step(1);
  add_content_value(&a, "a", 2000, 1.0f);
  add_content_value(&b, "b", 3000, 3.0f);
  pb::Summary::Value later;  // a second tensor for the same value; its content wins the merge
  later.mutable_tensor()->set_tensor_content(floats(2000, 9.0f));
  pb::TensorProto content_twice = a.summary().value(0).tensor();
  const std::string twice = content_twice.SerializeAsString() + len_field(4, floats(2000, 5.0f));
  const std::vector<std::string> payloads = {
      // Event.summary twice: the values of both.
      a.SerializeAsString() + b.SerializeAsString(),
      // Summary.Value.tensor twice in one value.
      "\x10\x01" + len_field(5, len_field(1, a.summary().value(0).SerializeAsString() + later.SerializeAsString())),
      // tensor_content twice in one tensor.
      len_field(5, len_field(1, "\x0a\x01t" + len_field(8, twice))),
      // Event.summary as a varint (libprotobuf keeps it as an unknown field), then the real one.
      "\x28\x07" + a.SerializeAsString(),
  };
  for (size_t i = 0; i < payloads.size(); ++i) {
    std::string stripped;
    std::vector<std::string_view> contents;
    EXPECT_FALSE(split_tensor_content(payloads[i], &stripped, &contents)) << i;
    std::vector<DecodedTensor> copied, borrowed;
    Status err_copied, err_borrowed;
    ASSERT_TRUE((err_copied = decode_event(payloads[i], &copied)).is_ok()) << i << " " << err_copied.to_string();
    ASSERT_TRUE((err_borrowed = decode_event(payloads[i], &borrowed, 0)).is_ok())
        << i << " " << err_borrowed.to_string();
    expect_same(copied, borrowed);
    EXPECT_EQ(borrowed.size(), i == 0 ? 2u : 1u) << i;
  }
  std::vector<DecodedTensor> out;
  Status err;
  ASSERT_TRUE((err = decode_event(payloads[1], &out, 0)).is_ok()) << err.to_string();
  ASSERT_TRUE((err = decode_event(payloads[2], &out, 0)).is_ok()) << err.to_string();
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].bytes(), floats(2000, 9.0f));
  EXPECT_EQ(out[1].bytes(), floats(2000, 5.0f));
}

TEST(TensorContentSplit, DamagedPayloadsFailAsTheyDidBefore) {
  pb::Event ev;
  add_content_value(&ev, "w", 4000, 1.0f);
  const std::string payload = ev.SerializeAsString();
  for (size_t cut : {payload.size() - 1, payload.size() / 2, size_t{3}}) {
    const std::string damaged = payload.substr(0, cut);
    std::string stripped;
    std::vector<std::string_view> contents;
    EXPECT_FALSE(split_tensor_content(damaged, &stripped, &contents)) << cut;
    std::vector<DecodedTensor> out;
    Status err_copied, err_borrowed;
    EXPECT_FALSE((err_copied = decode_event(damaged, &out)).is_ok());
    EXPECT_FALSE((err_borrowed = decode_event(damaged, &out, 0)).is_ok());
    EXPECT_EQ(err_borrowed.to_string(), err_copied.to_string());
  }
  // A record that says its content is longer than its shape: the same error either way.
  pb::Event wrong = ev;
  wrong.mutable_summary()->mutable_value(0)->mutable_tensor()->mutable_tensor_shape()->mutable_dim(0)->set_size(3999);
  std::vector<DecodedTensor> out;
  Status err_copied, err_borrowed;
  EXPECT_FALSE((err_copied = decode_event(wrong.SerializeAsString(), &out)).is_ok());
  EXPECT_FALSE((err_borrowed = decode_event(wrong.SerializeAsString(), &out, 0)).is_ok());
  EXPECT_EQ(err_borrowed.to_string(), err_copied.to_string());
  EXPECT_NE(err_copied.cause().find("tensor_content has 16000 bytes"), std::string::npos) << err_copied.to_string();
}

}  // namespace
