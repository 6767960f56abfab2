// Unit tests of the format layer: CRC-32C, TFRecord framing, event decoding, index and
// collections parsing.
#include <gtest/gtest.h>

#include <cstdio>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "ingest/format/collections_file.h"
#include "ingest/format/crc32c.h"
#include "ingest/format/event_decoder.h"
#include "ingest/format/index_file.h"
#include "ingest/format/proto/smdebug_event.pb.h"
#include "ingest/format/tfrecord.h"
#include "schema/value_blob.h"

using namespace trialdb;

TEST(Crc32c, KnownVectors) {
  // RFC 3720 B.4 test vectors.
  std::string zeros(32, '\0'), ones(32, '\xff'), inc(32, 0);
  for (int i = 0; i < 32; ++i) inc[i] = static_cast<char>(i);
  EXPECT_EQ(crc32c(zeros.data(), 32), 0x8a9136aau);
  EXPECT_EQ(crc32c(ones.data(), 32), 0x62a8ab43u);
  EXPECT_EQ(crc32c(inc.data(), 32), 0x46dd794eu);
  EXPECT_EQ(crc32c("123456789", 9), 0xe3069283u);
  EXPECT_EQ(crc32c("", 0), 0u);
}

TEST(Crc32c, HardwareAndTableAgreeOnEveryLengthAndAlignment) {
  std::string buf(300, '\0');
  for (size_t i = 0; i < buf.size(); ++i) buf[i] = static_cast<char>(i * 7 + 3);
  for (size_t off = 0; off < 8; ++off)
    for (size_t n = 0; n + off <= buf.size(); n += 13)
      ASSERT_EQ(crc32c(buf.data() + off, n), crc32c_portable(buf.data() + off, n)) << off << " " << n;
  // Incremental use gives the same CRC as one call.
  EXPECT_EQ(crc32c(buf.data() + 100, 200, crc32c(buf.data(), 100)), crc32c(buf.data(), 300));
}

TEST(Crc32c, InterleavedStreamsAgreeWithTableOnLargeBuffers) {
  // Lengths around the 3 x 4096-byte blocks where the hardware path combines three streams.
  std::string buf(50000, '\0');
  uint32_t x = 12345;
  for (auto& c : buf) c = static_cast<char>((x = x * 1103515245u + 12345u) >> 24);
  for (size_t off : {0, 1, 5})
    for (size_t n : {12287, 12288, 12289, 24576 + 5, 36864, 49990})
      ASSERT_EQ(crc32c(buf.data() + off, n), crc32c_portable(buf.data() + off, n)) << off << " " << n;
  EXPECT_EQ(crc32c(buf.data() + 20000, 30000, crc32c(buf.data(), 20000)), crc32c_portable(buf.data(), 50000));
}

// Every kernel the CPU has against the table, on every length from 0 to 1,100 (the 8-byte steps
// and tails), several alignments, lengths around the 12 KiB three-stream block, a non-zero
// initial CRC, and a large buffer. A kernel this CPU
// lacks is reported, not silently passed: the check then covers fewer kernels.
TEST(Crc32c, EveryKernelAgreesWithTheTable) {
  std::string buf(70000, '\0');
  uint32_t x = 987654321;
  for (auto& c : buf) c = static_cast<char>((x = x * 1103515245u + 12345u) >> 24);
  int tested = 0;
  for (Crc32cKernel k : {Crc32cKernel::kSse42}) {
    if (!crc32c_kernel_available(k)) {
      std::printf("note: CRC-32C kernel %d not available on this CPU\n", static_cast<int>(k));
      continue;
    }
    ++tested;
    for (size_t off : {0, 1, 3, 8, 63})
      for (size_t n = 0; n <= 1100; ++n)
        ASSERT_EQ(crc32c_with(k, buf.data() + off, n), crc32c_portable(buf.data() + off, n))
            << "kernel " << static_cast<int>(k) << " off " << off << " n " << n;
    for (size_t n : {2047, 2048, 2049, 4096 + 48, 12287, 12288, 12289, 65536 + 255, 69999})
      for (uint32_t init : {0u, 0xdeadbeefu})
        ASSERT_EQ(crc32c_with(k, buf.data(), n, init), crc32c_portable(buf.data(), n, init))
            << "kernel " << static_cast<int>(k) << " n " << n << " init " << init;
  }
  EXPECT_GE(tested, 1);
  EXPECT_STRNE(crc32c_kernel_name(), "");
}

TEST(Crc32c, SmdebugConstantFooter) {
  EXPECT_EQ(smdebug_constant_footer(), mask_crc32c(crc32c("0x12345678", 10)));
  EXPECT_EQ(mask_crc32c(0), 0xa282ead8u);
}

TEST(TfRecord, RoundTripBothFooterForms) {
  for (bool real : {false, true}) {
    std::string buf;
    append_record(&buf, "hello", real);
    append_record(&buf, "", real);
    RecordResult a = parse_record(buf);
    ASSERT_TRUE(a.status.is_ok()) << a.status.to_string();
    EXPECT_EQ(a.payload, "hello");
    EXPECT_EQ(a.consumed, 5 + kRecordOverhead);
    RecordResult b = parse_record(std::string_view(buf).substr(a.consumed));
    ASSERT_TRUE(b.status.is_ok()) << b.status.to_string();
    EXPECT_EQ(b.payload, "");
  }
}

TEST(TfRecord, TruncatedIsIncompleteAndFlippedByteIsCorrupt) {
  std::string buf;
  append_record(&buf, "some payload bytes", /*real_crc=*/true);
  for (size_t n = 0; n < buf.size(); ++n)
    EXPECT_EQ(parse_record(std::string_view(buf).substr(0, n)).status.kind(), ErrorKind::kIncomplete) << n;
  // With a real data CRC every single flipped byte is caught.
  for (size_t i = 0; i < buf.size(); ++i) {
    std::string bad = buf;
    bad[i] ^= 0x10;
    RecordResult r = parse_record(bad);
    EXPECT_EQ(r.status.kind(), ErrorKind::kInvalidInput) << i;
    EXPECT_NE(r.status.cause().find("CRC"), std::string::npos) << i;
  }
}

TEST(TfRecord, ConstantFooterStillGuardsLengthAndFooter) {
  // smdebug's default footer is a constant, so data bytes are not covered (as in smdebug);
  // the length field and the footer itself still are.
  std::string buf;
  append_record(&buf, "some payload bytes");
  for (size_t i : {size_t{0}, size_t{7}, size_t{8}, size_t{11}, buf.size() - 1, buf.size() - 4}) {
    std::string bad = buf;
    bad[i] ^= 0x01;
    EXPECT_EQ(parse_record(bad).status.kind(), ErrorKind::kInvalidInput) << i;
  }
}

TEST(TfRecord, HugeLengthFieldIsNotAnAllocation) {
  std::string buf(12, '\0');
  uint64_t len = uint64_t{1} << 40;
  std::memcpy(buf.data(), &len, 8);
  uint32_t c = masked_crc32c(buf.data(), 8);
  std::memcpy(buf.data() + 8, &c, 4);
  EXPECT_EQ(parse_record(buf).status.kind(), ErrorKind::kIncomplete);
}

namespace {
std::string event_with(const pb::TensorProto& t, const std::string& tag, int mode = 1, int mode_step = 7) {
  pb::Event ev;
  ev.set_step(42);
  auto* v = ev.mutable_summary()->add_value();
  v->set_tag(tag);
  *v->mutable_tensor() = t;
  auto* a = v->mutable_metadata()->add_plugin_data();
  a->set_plugin_name("mode_step");
  a->set_content(std::to_string(mode_step));
  auto* b = v->mutable_metadata()->add_plugin_data();
  b->set_plugin_name("mode");
  b->set_content(std::to_string(mode));
  return ev.SerializeAsString();
}
}  // namespace

TEST(EventDecoder, TensorContentWithRepeatedPluginData) {
  pb::TensorProto t;
  t.set_dtype(1);
  t.mutable_tensor_shape()->add_dim()->set_size(2);
  float v[2] = {1.5f, -2.0f};
  t.set_tensor_content(std::string(reinterpret_cast<char*>(v), 8));
  std::vector<DecodedTensor> out;
  Status err;
  ASSERT_TRUE((err = decode_event(event_with(t, "w", 2, 3), &out)).is_ok()) << err.to_string();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].tag, "w");
  EXPECT_EQ(out[0].event_step, 42);
  EXPECT_EQ(out[0].mode, Mode::kEval);
  EXPECT_EQ(out[0].mode_step, 3);
  EXPECT_EQ(out[0].dtype, DType::Float32);
  EXPECT_EQ(out[0].dims, std::vector<int64_t>{2});
  EXPECT_EQ(out[0].data.size(), 8u);
}

TEST(EventDecoder, NoPluginDataMeansGlobalAndEventStep) {
  pb::Event ev;
  ev.set_step(9);
  auto* v = ev.mutable_summary()->add_value();
  v->set_tag("x");
  v->mutable_tensor()->set_dtype(3);
  v->mutable_tensor()->add_int_val(5);
  std::vector<DecodedTensor> out;
  Status err;
  ASSERT_TRUE((err = decode_event(ev.SerializeAsString(), &out)).is_ok()) << err.to_string();
  EXPECT_EQ(out[0].mode, Mode::kGlobal);
  EXPECT_EQ(out[0].mode_step, 9);
  EXPECT_TRUE(out[0].dims.empty());  // 0-d
  int32_t x;
  std::memcpy(&x, out[0].data.data(), 4);
  EXPECT_EQ(x, 5);
}

TEST(EventDecoder, TypedValuesBroadcastAndPad) {
  pb::TensorProto t;
  t.set_dtype(2);
  t.mutable_tensor_shape()->add_dim()->set_size(3);
  t.add_double_val(4.0);
  std::vector<DecodedTensor> out;
  Status err;
  ASSERT_TRUE((err = decode_event(event_with(t, "d"), &out)).is_ok()) << err.to_string();
  const double* d = reinterpret_cast<const double*>(out[0].data.data());
  EXPECT_EQ(d[0], 4.0);
  EXPECT_EQ(d[2], 4.0);
  t.add_double_val(5.0);
  out.clear();
  ASSERT_TRUE((err = decode_event(event_with(t, "d"), &out)).is_ok());
  d = reinterpret_cast<const double*>(out[0].data.data());
  EXPECT_EQ(d[1], 5.0);
  EXPECT_EQ(d[2], 5.0);  // padded with the last, as TensorFlow does
  t.add_double_val(6.0);
  t.add_double_val(7.0);
  out.clear();
  EXPECT_FALSE((err = decode_event(event_with(t, "d"), &out)).is_ok());
}

// Every element past the listed ones is the last listed one, whatever the shape's length
// (the padding is copied in doubling blocks, so lengths around powers of two matter).
TEST(EventDecoder, TypedValuesPaddedWithTheLastAtEveryLength) {
  for (int listed = 0; listed <= 3; ++listed) {
    for (int64_t n = std::max(listed, 1); n <= 70; ++n) {
      pb::TensorProto t;
      t.set_dtype(9);  // int64
      t.mutable_tensor_shape()->add_dim()->set_size(n);
      for (int i = 0; i < listed; ++i) t.add_int64_val(100 + i);
      std::vector<DecodedTensor> out;
      Status err;
      ASSERT_TRUE((err = decode_event(event_with(t, "i"), &out)).is_ok()) << err.to_string();
      ASSERT_EQ(out[0].data.size(), static_cast<size_t>(n) * 8);
      for (int64_t i = 0; i < n; ++i) {
        int64_t x;
        std::memcpy(&x, out[0].data.data() + i * 8, 8);
        const int64_t want = listed == 0 ? 0 : 100 + std::min<int64_t>(i, listed - 1);
        ASSERT_EQ(x, want) << "listed " << listed << ", shape " << n << ", element " << i;
      }
    }
  }
}

TEST(EventDecoder, StringsAndBadContentSize) {
  pb::TensorProto s;
  s.mutable_tensor_shape()->add_dim()->set_size(2);
  s.add_string_val("ab");
  s.add_string_val("");
  std::vector<DecodedTensor> out;
  Status err;
  ASSERT_TRUE((err = decode_event(event_with(s, "s"), &out)).is_ok()) << err.to_string();
  EXPECT_EQ(out[0].dtype, DType::String);
  EXPECT_EQ(out[0].data.size(), 4u + 2 + 4);

  pb::TensorProto t;
  t.set_dtype(1);
  t.mutable_tensor_shape()->add_dim()->set_size(3);
  t.set_tensor_content(std::string(8, '\0'));  // 3 floats need 12 bytes
  out.clear();
  EXPECT_FALSE((err = decode_event(event_with(t, "bad"), &out)).is_ok());
  EXPECT_NE(err.cause().find("needs 12"), std::string::npos) << err.to_string();

  t.set_dtype(99);
  EXPECT_FALSE((err = decode_event(event_with(t, "bad"), &out)).is_ok());
  EXPECT_NE(err.cause().find("unknown tensor dtype 99"), std::string::npos) << err.to_string();
}

TEST(EventDecoder, SmdebugDtypeReadingQuirks) {
  DType d;
  bool readable;
  ASSERT_TRUE(dtype_from_tf(6, &d, &readable));  // DT_INT8 is read as uint8 by smdebug
  EXPECT_EQ(d, DType::UInt8);
  EXPECT_TRUE(readable);
  ASSERT_TRUE(dtype_from_tf(5, &d, &readable));  // DT_INT16: smdebug raises KeyError
  EXPECT_EQ(d, DType::Int16);
  EXPECT_FALSE(readable);
  ASSERT_TRUE(dtype_from_tf(19, &d, &readable));
  EXPECT_EQ(d, DType::Float16);
  EXPECT_FALSE(dtype_from_tf(21, &d, &readable));
}

TEST(IndexFile, PathParsing) {
  int64_t step;
  std::string worker;
  ASSERT_TRUE(parse_index_path("index/000000001/000000001500__replica-0_task-1_device-GPU-0.json", &step, &worker));
  EXPECT_EQ(step, 1500);
  EXPECT_EQ(worker, "_replica-0_task-1_device-GPU-0");
  EXPECT_FALSE(parse_index_path("index/000000000/12_worker_0.json", &step, &worker));
  EXPECT_FALSE(parse_index_path("index/000000000/000000000001_worker_0.txt", &step, &worker));
}

TEST(IndexFile, RejectsPathsOutsideTheTrial) {
  EXPECT_TRUE(is_safe_relative_path("events/000000000001/000000000001_worker_0.tfevents"));
  for (const char* p : {"../../x", "/etc/passwd", "events/../../x", "a//b", "C:/x", "a\\b", ""})
    EXPECT_FALSE(is_safe_relative_path(p)) << p;
  IndexFile idx;
  Status err;
  EXPECT_FALSE(
      (err = parse_index_json(R"({"meta":{"mode":"TRAIN","mode_step":0,"event_file_name":"../../x"}})", &idx)).is_ok());
  EXPECT_NE(err.cause().find("outside the trial"), std::string::npos);
}

TEST(IndexFile, ValidatesTypes) {
  IndexFile idx;
  Status err;
  ASSERT_TRUE((err = parse_index_json(R"({"meta":{"mode":"EVAL","mode_step":3,"event_file_name":"events/e"},
          "tensor_payload":[{"tensorname":"a","start_idx":8,"length":100}],
          "shape_payload":[{"tensorname":"b","originalname":"b","shape":[2,3]}]})",
                                      &idx))
                  .is_ok())
      << err.to_string();
  EXPECT_EQ(idx.mode, Mode::kEval);
  EXPECT_EQ(idx.mode_step, 3);
  EXPECT_EQ(idx.tensors[0].start, 8u);
  EXPECT_EQ(idx.shapes[0].shape, (std::vector<int64_t>{2, 3}));
  for (const char* bad :
       {"[]", "{", R"({"meta":{"mode":"FOO","mode_step":0}})", R"({"meta":{"mode":"TRAIN","mode_step":"0"}})"})
    EXPECT_FALSE((err = parse_index_json(bad, &idx)).is_ok()) << bad;
  // A malformed entry costs only that entry.
  IndexFile partial;
  ASSERT_TRUE((err = parse_index_json(R"({"meta":{"mode":"TRAIN","mode_step":0,"event_file_name":"e"},"tensor_payload":[
          {"tensorname":"","start_idx":0,"length":20},{"tensorname":"a","start_idx":-1,"length":20},
          {"tensorname":"ok","start_idx":20,"length":20}]})",
                                      &partial))
                  .is_ok())
      << err.to_string();
  ASSERT_EQ(partial.tensors.size(), 1u);
  EXPECT_EQ(partial.tensors[0].tensor, "ok");
  ASSERT_EQ(partial.skipped.size(), 2u);
  EXPECT_NE(partial.skipped[0].find("empty tensorname"), std::string::npos) << partial.skipped[0];
  EXPECT_NE(partial.skipped[1].find("start_idx"), std::string::npos) << partial.skipped[1];
}

TEST(CollectionsFile, ParsesAndRejects) {
  CollectionsFile cf;
  Status err;
  ASSERT_TRUE(
      (err = parse_collections_json(
           R"({"collections":{"weights":{"name":"weights","include_regex":["^(?!gradient).*weight"],"tensor_names":["w"]}},"_meta":{"num_workers":2}})",
           &cf))
          .is_ok());
  EXPECT_EQ(cf.num_workers, 2);
  EXPECT_EQ(cf.collections[0].include_regex[0], "^(?!gradient).*weight");
  EXPECT_EQ(cf.collections[0].save_config, "");  // none in the file
  CollectionsFile configs;
  ASSERT_TRUE(parse_collections_json(
                  R"({"collections":{"l":{"tensor_names":["loss"],"save_config":{"TRAIN":{"save_interval":5}},)"
                  R"("reduction_config":null}}})",
                  &configs)
                  .is_ok());
  EXPECT_EQ(configs.collections[0].save_config, R"({"TRAIN":{"save_interval":5}})");
  EXPECT_EQ(configs.collections[0].reduction_config, "null");
  EXPECT_FALSE((err = parse_collections_json(R"({"collections":{"x":{"include_regex":"notalist"}}})", &cf)).is_ok());
  EXPECT_FALSE((err = parse_collections_json("garbage", &cf)).is_ok());
  EXPECT_TRUE(is_collections_path("collections/000000000/worker_0_collections.json"));
  EXPECT_TRUE(is_collections_path("collections/000000000/collections/000000000/worker_0_collections.json"));
  EXPECT_FALSE(is_collections_path("index/000000000/worker_0_collections.json"));
}

// The file is parsed once, under a nesting bound of 64 levels (the outermost object is level 1):
// a definition at the bound is read, one level deeper is the depth error, before the text's own
// damage; a file damaged above the bound is not JSON.
TEST(CollectionsFile, NestingBoundIsCheckedInTheOneParse) {
  const auto file = [](int config_levels, const std::string& tail) {
    // file, "collections", "c", then the reduction_config's levels of arrays
    return R"({"collections":{"c":{"tensor_names":["t"],"reduction_config":)" + std::string(config_levels, '[') +
           std::string(config_levels, ']') + tail;
  };
  CollectionsFile at_bound;
  ASSERT_TRUE(parse_collections_json(file(61, "}}}"), &at_bound).is_ok());
  EXPECT_EQ(at_bound.collections[0].reduction_config, std::string(61, '[') + std::string(61, ']'));
  CollectionsFile past;
  Status st = parse_collections_json(file(62, "}}}"), &past);
  EXPECT_EQ(st.cause(), "collections file: JSON nested deeper than 64 levels");
  EXPECT_TRUE(past.collections.empty());
  EXPECT_EQ(parse_collections_json(file(62, "}"), &past).cause(),
            "collections file: JSON nested deeper than 64 levels");
  EXPECT_EQ(parse_collections_json(file(61, "}"), &past).cause(), "collections file is not valid JSON");
}
