// TensorBoard's summary Events (summary_encoder.h), with the generated messages: one Event per
// (tag, step), small next to the tensors smdebug writes.
#include "ingest/format/summary_encoder.h"

#include "ingest/format/proto/smdebug_event.pb.h"

namespace trialdb {

namespace {

// TensorFlow's DataType of a string tensor (types.proto).
constexpr int kTfString = 7;

pb::Summary::Value* new_value(pb::Event* ev, double wall_time, int64_t step, std::string_view tag) {
  ev->set_wall_time(wall_time);
  ev->set_step(step);
  pb::Summary::Value* v = ev->mutable_summary()->add_value();
  v->set_tag(std::string(tag));
  return v;
}

}  // namespace

std::string encode_scalar_event(double wall_time, int64_t step, std::string_view tag, float value) {
  pb::Event ev;
  new_value(&ev, wall_time, step, tag)->set_simple_value(value);
  return ev.SerializeAsString();
}

std::string encode_histogram_event(double wall_time, int64_t step, std::string_view tag, const SummaryHistogram& h) {
  pb::HistogramProto histo;
  histo.set_min(h.min);
  histo.set_max(h.max);
  histo.set_num(h.num);
  histo.set_sum(h.sum);
  histo.set_sum_squares(h.sum_squares);
  histo.mutable_bucket_limit()->Add(h.limits.begin(), h.limits.end());
  histo.mutable_bucket()->Add(h.counts.begin(), h.counts.end());
  pb::Event ev;
  new_value(&ev, wall_time, step, tag)->set_histo(histo.SerializeAsString());
  return ev.SerializeAsString();
}

std::string encode_text_event(double wall_time, int64_t step, std::string_view tag, std::string_view markdown) {
  pb::Event ev;
  pb::Summary::Value* v = new_value(&ev, wall_time, step, tag);
  v->mutable_metadata()->add_plugin_data()->set_plugin_name(std::string(kTextPluginName));
  pb::TensorProto* t = v->mutable_tensor();
  t->set_dtype(kTfString);
  t->mutable_tensor_shape();  // a scalar: no dims
  t->add_string_val(std::string(markdown));
  return ev.SerializeAsString();
}

}  // namespace trialdb
