// libFuzzer target: the histogram-blob decoder on arbitrary bytes. A blob that decodes must give
// the same runs again once re-encoded (the encoder may choose other widths), its JSON text must be
// produced without error, and its buckets must be at most 8 a byte of the blob.
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "schema/histogram_blob.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace trialdb;
  const std::string_view blob(reinterpret_cast<const char*>(data), size);
  std::vector<std::pair<int64_t, std::vector<uint64_t>>> runs;
  HistogramBlobReader r(blob);
  int64_t first;
  const std::vector<uint64_t>* counts;
  while (r.next(&first, &counts)) runs.emplace_back(first, *counts);
  std::vector<std::pair<int64_t, uint64_t>> buckets;
  const Status decoded = decode_histogram_blob(blob, &buckets);
  if (decoded.is_ok() != r.error().is_ok()) __builtin_trap();
  if (!decoded.is_ok()) {
    if (decoded.kind() != ErrorKind::kInvalidInput || decoded.cause().empty()) __builtin_trap();
    return 0;
  }
  if (buckets.size() > 8 * size) __builtin_trap();
  std::string text;
  if (!histogram_blob_json(blob, &text).is_ok() || text.front() != '{' || text.back() != '}') __builtin_trap();
  HistogramBlobWriter w;
  for (const auto& [f, c] : runs) {
    w.begin_run(f);
    for (uint64_t n : c) w.add_count(n);
  }
  const std::string again = w.finish();
  HistogramBlobReader r2(again);
  size_t i = 0;
  while (r2.next(&first, &counts)) {
    if (i >= runs.size() || runs[i].first != first || runs[i].second != *counts) __builtin_trap();
    ++i;
  }
  if (!r2.error().is_ok() || i != runs.size()) __builtin_trap();
  return 0;
}
