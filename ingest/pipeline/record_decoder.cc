#include "ingest/pipeline/record_decoder.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "ingest/format/tfrecord.h"
#include "kernels/element_loader.h"

namespace trialdb {

namespace {

constexpr std::string_view kReductionsPrefix = "smdebug/reductions/";
constexpr std::string_view kAbsPrefix = "abs_";
// Every record leaves its tensor_content in the span (decode_event's borrowing): the value is then
// copied once, into its blob, or not at all (encode_record in place), instead of into a string first.
constexpr size_t kBorrowContentBytes = 0;

// "smdebug/reductions/abs_l2/grad/x" -> ("grad/x", bit of abs l2).
bool parse_reduction_name(const std::string& name, std::string* tensor, int* bit) {
  if (name.compare(0, kReductionsPrefix.size(), kReductionsPrefix) != 0) return false;
  const size_t start = kReductionsPrefix.size();
  const size_t slash = name.find('/', start);
  if (slash == std::string::npos || slash + 1 >= name.size()) return false;
  std::string_view reduction(name.data() + start, slash - start);
  const bool abs = reduction.substr(0, kAbsPrefix.size()) == kAbsPrefix;
  if (abs) reduction.remove_prefix(kAbsPrefix.size());
  const int index = reduction_index(reduction);
  if (index < 0) return false;
  *bit = index + (abs ? kRedCount : 0);
  *tensor = name.substr(slash + 1);
  return true;
}

// Frees a decoded tensor's bytes (or forgets its view), keeping what describes it.
void release_bytes(DecodedTensor& t) {
  std::string().swap(t.data);
  t.borrowed = {};
}

std::string where(const IndexEntry& e, const std::string& event_file) {
  return "tensor '" + e.tensor + "' in " + event_file + " at offset " + std::to_string(e.start);
}

}  // namespace

bool entry_length_valid(const IndexEntry& e) { return e.length >= kRecordOverhead && e.start <= UINT64_MAX - e.length; }

DecodedRecord decode_record(const IndexEntry& e, int64_t step, std::string_view span, uint64_t span_offset,
                            const std::string& event_file, uint64_t max_blob_bytes, RecordStatistics statistics) {
  DecodedRecord d;
  if (!entry_length_valid(e)) {
    d.invalid_entry = true;
    return d;
  }
  if (e.start + e.length - span_offset > span.size()) {
    d.error = "tensor '" + e.tensor + "': record at offset " + std::to_string(e.start) + " (+" +
              std::to_string(e.length) + ") is past the end of " + event_file + " (" +
              std::to_string(span_offset + span.size()) + " bytes)";
    return d;
  }
  RecordResult r = parse_record(span.substr(e.start - span_offset, e.length));
  if (!r.status.is_ok() || r.consumed != e.length) {
    d.error = where(e, event_file) + ": " +
              (r.status.kind() == ErrorKind::kInvalidInput
                   ? r.status.cause()
                   : "record length field does not match the index length " + std::to_string(e.length));
    return d;
  }
  std::vector<DecodedTensor> decoded;
  if (Status st = decode_event(r.payload, &decoded, kBorrowContentBytes, record_growth_share(e.length, span.size()));
      !st.is_ok()) {
    d.error = where(e, event_file) + ": " + st.cause();
    return d;
  }
  if (decoded.empty()) {
    d.error = where(e, event_file) + ": record holds no tensor";
    return d;
  }
  DecodedTensor& t = decoded.front();  // smdebug writes one value per record
  const bool is_reduction = parse_reduction_name(e.tensor, &d.reduced_tensor, &d.reduction_bit);
  if (t.tag != e.tensor && !(is_reduction && t.tag == d.reduced_tensor)) {
    d.error = where(e, event_file) + ": the record holds tensor '" + t.tag + "', not the one the index names";
    return d;
  }
  if (t.event_step != step) {
    d.error = where(e, event_file) + ": the record is of step " + std::to_string(t.event_step) +
              ", not of the index file's step";
    return d;
  }
  TensorView tv;
  tv.dtype = t.dtype;
  tv.ndim = static_cast<int>(t.dims.size());
  tv.numel = shape_numel(t.dims.data(), tv.ndim);
  const std::string_view bytes = t.bytes();
  tv.data = reinterpret_cast<const uint8_t*>(bytes.data());
  tv.data_bytes = bytes.size();
  if (is_reduction) {
    if (!dtype_is_real(t.dtype) || tv.numel != 1) {
      d.error = "reduction '" + e.tensor + "' is not a numeric scalar (" + std::to_string(tv.numel) + " elements)";
      return d;
    }
    d.is_reduction = true;
    d.reduction_value = element_as_double(tv, 0);
    return d;
  }
  d.numel = tv.numel;
  // Reductions are offered where smdebug can read the value (parity with its Trial API);
  // tensor_reduce() answers for the rest.
  const bool scalar_reductions_only =
      statistics == RecordStatistics::kComputeButScalarDistribution && tv.numel == 1 && t.smdebug_readable;
  if (scalar_reductions_only) {
    d.has_reductions = compute_reductions(tv, &d.reductions);
  } else if (statistics != RecordStatistics::kSkip) {
#ifndef TRIALDB_BENCH_WITHOUT_DISTRIBUTIONS  // bench/run's reference build only (bench/CMakeLists.txt)
    d.has_distribution = compute_reductions_and_distribution(tv, t.smdebug_readable ? &d.reductions : nullptr,
                                                             &d.has_reductions, &d.distribution);
#else
    d.has_reductions = t.smdebug_readable && compute_reductions(tv, &d.reductions);
#endif
  }
  if (kBlobHeaderFixed + 8 * t.dims.size() + bytes.size() > max_blob_bytes) {
    // SQLite cannot hold it as one value (SQLITE_MAX_LENGTH); keep what describes it.
    d.too_large = true;
    d.notice = "tensor '" + e.tensor + "': its value is " + std::to_string(bytes.size()) +
               " bytes, over SQLite's limit of " + std::to_string(max_blob_bytes) +
               " bytes for one value; its dtype, shape and reductions are stored, the raw value is not";
    release_bytes(t);
  }
  d.tensor = std::move(t);
  return d;
}

void encode_record(DecodedRecord& d, bool compress, char* span, size_t record_start, bool in_place) {
  if (d.is_reduction || d.too_large || !d.error.empty() || d.invalid_entry) return;
  const DecodedTensor& t = d.tensor;
  const std::string_view raw = t.bytes();
  const int ndim = static_cast<int>(t.dims.size());
  if (in_place && !compress && t.is_borrowed) {
    std::string header;
    append_blob_header(&header, t.dtype, t.dims.data(), ndim);
    const size_t at = static_cast<size_t>(raw.data() - span);
    if (at >= record_start + header.size()) {
      char* blob = span + at - header.size();
      std::memcpy(blob, header.data(), header.size());
      d.blob.in_span = std::string_view(blob, header.size() + raw.size());
      release_bytes(d.tensor);
      return;
    }
  }
  d.blob.owned = encode_blob(t.dtype, t.dims.data(), ndim, raw.data(), raw.size(), compress);
  release_bytes(d.tensor);
}

void encode_header_only(DecodedRecord& d) {
  if (d.is_reduction || d.too_large || !d.error.empty() || d.invalid_entry) return;
  d.blob.owned = encode_bytes_not_stored(d.tensor.dtype, d.tensor.dims.data(), static_cast<int>(d.tensor.dims.size()));
  release_bytes(d.tensor);
}

std::string_view value_tensor_of(const std::string& entry_name) {
  std::string tensor;
  int bit;
  if (!parse_reduction_name(entry_name, &tensor, &bit)) return entry_name;
  return std::string_view(entry_name).substr(entry_name.size() - tensor.size());
}

std::unordered_set<std::string_view> tensors_with_saved_reductions(const std::vector<IndexEntry>& entries) {
  std::unordered_set<std::string_view> reduced;
  for (const auto& e : entries)
    if (const std::string_view tensor = value_tensor_of(e.tensor); tensor.size() != e.tensor.size())
      reduced.insert(tensor);
  return reduced;
}

bool records_disjoint(const std::vector<IndexEntry>& entries) {
  std::vector<std::pair<uint64_t, uint64_t>> ranges;
  for (const auto& e : entries)
    if (entry_length_valid(e)) ranges.emplace_back(e.start, e.start + e.length);
  std::sort(ranges.begin(), ranges.end());
  for (size_t i = 1; i < ranges.size(); ++i)
    if (ranges[i].first < ranges[i - 1].second) return false;
  return true;
}

}  // namespace trialdb
