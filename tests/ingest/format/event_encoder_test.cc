// event_encoder.h: the hand-encoded Event around a tensor_content gives the generated
// serializer's bytes exactly, in the corners where protobuf leaves fields out or lengths grow a
// byte; the other encoders and the TensorFlow DataType numbers.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "ingest/format/event_encoder.h"
#include "ingest/format/proto/smdebug_event.pb.h"

namespace trialdb {
namespace {

struct TensorCase {
  const char* what;
  double wall_time;
  int64_t step;
  std::string tag;
  int tf_dtype;
  std::vector<int64_t> shape;
  size_t content_bytes;
};

// The Event the generated classes build for a case, the way smdebug fills it.
pb::Event reference_event(const TensorCase& c, const std::string& content, const std::string& metadata) {
  pb::Event ev;
  ev.set_wall_time(c.wall_time);
  ev.set_step(c.step);
  auto* value = ev.mutable_summary()->add_value();
  value->set_tag(c.tag);
  auto* tensor = value->mutable_tensor();
  tensor->set_dtype(c.tf_dtype);
  auto* shape = tensor->mutable_tensor_shape();
  for (int64_t size : c.shape) {
    auto* dim = shape->add_dim();
    dim->set_size(size);
    dim->set_name(c.tag + "_" + std::to_string(size));
  }
  tensor->set_tensor_content(content);
  value->mutable_metadata()->ParseFromString(metadata);
  return ev;
}

TEST(EventEncoder, TensorContentEventIsTheGeneratedSerializersBytes) {
  const std::string long_tag(200, 't');  // its length needs a two-byte varint
  const TensorCase cases[] = {
      {"matrix", 1700000000.25, 7, "layer/w", 1, {2, 3}, 24},
      {"scalar", 1.5, 1, "loss", 2, {}, 8},
      {"step 0 is left out", 1.5, 0, "x", 9, {1}, 8},
      {"wall_time +0.0 is left out", 0.0, 3, "x", 1, {1}, 4},
      {"wall_time -0.0 is kept", -0.0, 3, "x", 1, {1}, 4},
      {"empty tensor: zero dim size and no content", 2.0, 4, "e", 1, {0, 4}, 0},
      {"dtype 0 is left out", 2.0, 4, "d", 0, {2}, 2},
      {"empty tag is left out", 2.0, 4, "", 1, {1}, 4},
      {"negative step and dim: ten-byte varints", 2.0, -5, "n", 1, {-1}, 4},
      {"long tag and big content: multi-byte lengths", 3.0, 1 << 20, long_tag, 19, {130, 129}, 130 * 129 * 2},
  };
  TensorContentFrame frame;  // reused across cases, as StepWriter does
  for (const TensorCase& c : cases) {
    SCOPED_TRACE(c.what);
    const std::string metadata = encode_mode_plugin_metadata(Mode::kEval, 12345);
    std::string content(c.content_bytes, '\0');
    for (size_t i = 0; i < content.size(); ++i) content[i] = static_cast<char>(i * 31 + 7);
    encode_tensor_content_event(
        {.wall_time = c.wall_time, .step = c.step, .tag = c.tag, .shape = c.shape, .plugin_metadata = metadata},
        c.tf_dtype, c.content_bytes, &frame);
    const std::string ours = frame.head + content + frame.trailer;
    const std::string reference = reference_event(c, content, metadata).SerializeAsString();
    EXPECT_EQ(ours, reference);
    pb::Event parsed;
    ASSERT_TRUE(parsed.ParseFromString(ours));
    EXPECT_EQ(parsed.summary().value(0).tensor().tensor_content(), content);
    EXPECT_EQ(std::signbit(parsed.wall_time()), std::signbit(c.wall_time));
  }
}

TEST(EventEncoder, ModePluginMetadataIsModeStepThenMode) {
  pb::SummaryMetadata metadata;
  ASSERT_TRUE(metadata.ParseFromString(encode_mode_plugin_metadata(Mode::kPredict, 42)));
  ASSERT_EQ(metadata.plugin_data_size(), 2);
  EXPECT_EQ(metadata.plugin_data(0).plugin_name(), "mode_step");
  EXPECT_EQ(metadata.plugin_data(0).content(), "42");
  EXPECT_EQ(metadata.plugin_data(1).plugin_name(), "mode");
  EXPECT_EQ(metadata.plugin_data(1).content(), "3");
}

TEST(EventEncoder, StringTensorEvent) {
  const std::string metadata = encode_mode_plugin_metadata(Mode::kTrain, 2);
  const std::vector<int64_t> shape = {2};
  pb::Event ev;
  ASSERT_TRUE(ev.ParseFromString(encode_string_tensor_event(
      {.wall_time = 5.5, .step = 9, .tag = "names", .shape = shape, .plugin_metadata = metadata}, {"a", "bc"})));
  EXPECT_EQ(ev.wall_time(), 5.5);
  EXPECT_EQ(ev.step(), 9);
  const auto& value = ev.summary().value(0);
  EXPECT_EQ(value.tag(), "names");
  EXPECT_EQ(value.tensor().dtype(), 0);  // smdebug leaves a string tensor's dtype unset
  ASSERT_EQ(value.tensor().string_val_size(), 2);
  EXPECT_EQ(value.tensor().string_val(1), "bc");
  ASSERT_EQ(value.tensor().tensor_shape().dim_size(), 1);
  EXPECT_EQ(value.tensor().tensor_shape().dim(0).size(), 2);
  EXPECT_EQ(value.tensor().tensor_shape().dim(0).name(), "names_2");
  EXPECT_EQ(value.metadata().SerializeAsString(), metadata);
}

TEST(EventEncoder, FileVersionEventHasNoSummary) {
  pb::Event ev;
  ASSERT_TRUE(ev.ParseFromString(encode_file_version_event(7.25)));
  EXPECT_EQ(ev.wall_time(), 7.25);
  EXPECT_EQ(ev.file_version(), "brain.Event:2");
  EXPECT_FALSE(ev.has_summary());
}

TEST(EventEncoder, TfDataTypeNumbers) {
  // TensorFlow's types.proto numbers, which smdebug writes and readers expect.
  const std::pair<DType, int> expected[] = {
      {DType::Float32, 1},     {DType::Float64, 2},  {DType::Int32, 3},     {DType::UInt8, 4},
      {DType::Int16, 5},       {DType::Int8, 6},     {DType::String, 0},    {DType::Complex64, 8},
      {DType::Int64, 9},       {DType::Bool, 10},    {DType::BFloat16, 14}, {DType::UInt16, 17},
      {DType::Complex128, 18}, {DType::Float16, 19}, {DType::UInt32, 22},   {DType::UInt64, 23},
  };
  ASSERT_EQ(std::size(expected), static_cast<size_t>(kDTypeCount));
  for (const auto& [dtype, number] : expected) EXPECT_EQ(tf_dtype_number(dtype), number) << dtype_name(dtype);
}

}  // namespace
}  // namespace trialdb
