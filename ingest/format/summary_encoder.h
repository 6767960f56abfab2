// Encodes TensorBoard's summary Events: a scalar (Value.simple_value), a histogram (Value.histo,
// a HistogramProto) and a text (a string TensorProto under the "text" plugin), each an Event of
// the same wire format as smdebug's (proto/smdebug_event.proto), framed by tfrecord.h with the
// real CRC, as TensorBoard's reader checks it. `trialdb export --tensorboard` writes them.
//
// There is no decoder beside it: TensorBoard is the reader, and tests/tensorboard decodes the
// files with TensorBoard's own message definitions.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace trialdb {

// A histogram as TensorBoard draws it: bucket i holds the values in (limits[i-1], limits[i]].
struct SummaryHistogram {
  double min = 0, max = 0, num = 0, sum = 0, sum_squares = 0;
  std::vector<double> limits, counts;
};

// TensorBoard's plugin that renders a string tensor as markdown.
inline constexpr std::string_view kTextPluginName = "text";

std::string encode_scalar_event(double wall_time, int64_t step, std::string_view tag, float value);
std::string encode_histogram_event(double wall_time, int64_t step, std::string_view tag, const SummaryHistogram& h);
std::string encode_text_event(double wall_time, int64_t step, std::string_view tag, std::string_view markdown);

}  // namespace trialdb
