// decode_event's per-thread arena (records up to 64 KiB) and its plain-message path (larger
// records) must give identical results; results must not depend on what the thread decoded
// before (a failed record, a bigger one) nor reference arena memory after the call; plugin
// data must be read exactly as strtoll(content, &end, 10) consuming the whole content.
#include <gtest/gtest.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "ingest/format/event_decoder.h"
#include "ingest/format/proto/smdebug_event.pb.h"

using namespace trialdb;

namespace {

std::string scalar_event(const std::string& tag, float value, int64_t step, const std::string& mode_step = "7",
                         const std::string& mode = "1") {
  pb::Event ev;
  ev.set_step(step);
  auto* v = ev.mutable_summary()->add_value();
  v->set_tag(tag);
  auto* t = v->mutable_tensor();
  t->set_dtype(1);
  t->set_tensor_content(std::string(reinterpret_cast<const char*>(&value), 4));
  auto* a = v->mutable_metadata()->add_plugin_data();
  a->set_plugin_name("mode_step");
  a->set_content(mode_step);
  auto* b = v->mutable_metadata()->add_plugin_data();
  b->set_plugin_name("mode");
  b->set_content(mode);
  return ev.SerializeAsString();
}

// A float32 vector of n elements as typed float_val (so the message holds a large repeated field).
std::string vector_event(const std::string& tag, int n, bool as_content) {
  pb::Event ev;
  ev.set_step(3);
  auto* v = ev.mutable_summary()->add_value();
  v->set_tag(tag);
  auto* t = v->mutable_tensor();
  t->set_dtype(1);
  t->mutable_tensor_shape()->add_dim()->set_size(n);
  std::vector<float> f(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) f[static_cast<size_t>(i)] = static_cast<float>(i) * 0.25f;
  if (as_content) t->set_tensor_content(std::string(reinterpret_cast<const char*>(f.data()), f.size() * 4));
  else
    for (float x : f) t->add_float_val(x);
  return ev.SerializeAsString();
}

float as_float(const std::string& data) {
  float f;
  std::memcpy(&f, data.data(), 4);
  return f;
}

TEST(EventDecoderReuse, ResultsOutliveTheArenaAndLaterRecords) {
  std::vector<DecodedTensor> kept;
  Status err;
  for (int i = 0; i < 500; ++i) {
    // A long tag (heap-allocated string) and data must stay valid after the arena is reset.
    ASSERT_TRUE((err = decode_event(scalar_event("a/long/tensor/name/number_" + std::to_string(i), i * 0.5f, i), &kept))
                    .is_ok())
        << err.to_string();
    if (i % 50 == 0) {
      std::vector<DecodedTensor> junk;
      EXPECT_FALSE((err = decode_event("\xff\xff\xff", &junk)).is_ok());  // a failure in between
      ASSERT_TRUE((err = decode_event(vector_event("big", 40000, false), &junk)).is_ok())
          << err.to_string();  // > 64 KiB
      ASSERT_TRUE((err = decode_event(vector_event("mid", 3000, false), &junk)).is_ok())
          << err.to_string();  // arena grows
    }
  }
  ASSERT_EQ(kept.size(), 500u);
  for (int i = 0; i < 500; ++i) {
    const DecodedTensor& d = kept[static_cast<size_t>(i)];
    EXPECT_EQ(d.tag, "a/long/tensor/name/number_" + std::to_string(i));
    EXPECT_EQ(d.event_step, i);
    EXPECT_EQ(d.mode_step, 7);
    EXPECT_EQ(d.mode, Mode::kTrain);
    EXPECT_EQ(as_float(d.data), i * 0.5f);
  }
}

TEST(EventDecoderReuse, ArenaAndHeapPathsAgree) {
  // Around the 64 KiB switch, typed values and tensor_content, the same tensor both ways.
  for (int n : {1, 100, 16383, 16384, 16385, 17000, 40000}) {
    for (bool as_content : {false, true}) {
      std::vector<DecodedTensor> out;
      Status err;
      std::string payload = vector_event("v", n, as_content);
      ASSERT_TRUE((err = decode_event(payload, &out)).is_ok()) << n << " " << err.to_string();
      ASSERT_EQ(out.size(), 1u);
      ASSERT_EQ(out[0].dims, std::vector<int64_t>{n});
      ASSERT_EQ(out[0].data.size(), static_cast<size_t>(n) * 4);
      for (int i = 0; i < n; i += 997) {
        float f;
        std::memcpy(&f, out[0].data.data() + static_cast<size_t>(i) * 4, 4);
        ASSERT_EQ(f, static_cast<float>(i) * 0.25f) << n << " " << as_content << " " << i;
      }
    }
  }
}

TEST(EventDecoderReuse, ThreadsDecodeIndependently) {
  auto work = [](int seed, bool* ok) {
    *ok = true;
    for (int i = 0; i < 2000 && *ok; ++i) {
      std::vector<DecodedTensor> out;
      Status err;
      const int step = seed * 100000 + i;
      if (!(err = decode_event(scalar_event("t" + std::to_string(seed), static_cast<float>(step), step), &out))
               .is_ok() ||
          out.size() != 1 || out[0].event_step != step || as_float(out[0].data) != static_cast<float>(step))
        *ok = false;
    }
  };
  bool ok1 = false, ok2 = false;
  std::thread a(work, 1, &ok1), b(work, 2, &ok2);
  a.join();
  b.join();
  EXPECT_TRUE(ok1);
  EXPECT_TRUE(ok2);
}

TEST(EventDecoderReuse, PluginDataReadAsWholeStrtoll) {
  const std::vector<std::string> contents = {"7",
                                             "0",
                                             "-3",
                                             "+5",
                                             " 12",
                                             "\t\n\v\f\r 4",
                                             "12 ",
                                             "",
                                             " ",
                                             "+",
                                             "-",
                                             "x",
                                             "0x10",
                                             "1e3",
                                             "3.0",
                                             "--1",
                                             "+-1",
                                             "007",
                                             "9223372036854775807",
                                             "9223372036854775808",
                                             "99999999999999999999999",
                                             "-9223372036854775808",
                                             "-9223372036854775809",
                                             "-99999999999999999999999",
                                             std::string("5\0", 2),
                                             std::string("\0"
                                                         "5",
                                                         2),
                                             "\xc2\xa0"
                                             "5",
                                             "٣"};
  for (const std::string& c : contents) {
    // The reference reading: strtoll over the C string, all of it consumed.
    char* end = nullptr;
    errno = 0;
    long long want = std::strtoll(c.c_str(), &end, 10);
    bool numeric = !c.empty() && end == c.c_str() + c.size();
    std::vector<DecodedTensor> out;
    Status err;
    ASSERT_TRUE((err = decode_event(scalar_event("t", 1.0f, 42, c, c), &out)).is_ok()) << err.to_string();
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].mode_step, numeric ? want : 42) << "'" << c << "'";
    const bool mode_ok = numeric && want >= 1 && want <= 4;
    EXPECT_EQ(out[0].mode, mode_ok ? static_cast<Mode>(want) : Mode::kGlobal) << "'" << c << "'";
    EXPECT_EQ(out[0].has_mode, numeric) << "'" << c << "'";
  }
}

}  // namespace
