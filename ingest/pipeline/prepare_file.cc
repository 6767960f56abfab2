#include "ingest/pipeline/prepare_file.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <future>
#include <limits>
#include <optional>
#include <string_view>
#include <system_error>
#include <unordered_map>
#include <unordered_set>

#include "ingest/format/index_file.h"
#include "ingest/pipeline/record_decoder.h"

namespace trialdb {

namespace {

constexpr uint64_t kMapSpanBytes = 1u << 20;  // spans this large are mapped, not read
// A blob built in place in a mapped span dirties the page its header is written to, which the
// kernel then copies (the mapping is private): that costs less than copying the value only for
// records this large. Smaller ones of a mapped span are copied into their blobs.
constexpr uint64_t kInPlaceMappedRecordBytes = 64u << 10;
constexpr size_t kParallelDecodeBytes = 16u << 20;  // files larger than this decode on several threads...
constexpr size_t kParallelRecordBytes = 64u << 20;  // ...unless their records are larger (memory: 2x a record each)
// What one index entry costs while its file is prepared, beside its record's bytes: taken from
// the read-ahead budget with them, so an index of millions of entries is bounded like a span.
constexpr uint64_t kEntryBytes = sizeof(DecodedRecord) + sizeof(PreparedValue) + sizeof(IndexEntry);

// A file's values by tensor name: an open-addressing table of indexes into `values`, which
// holds the names. One probe sequence per lookup and no allocation per name (a node-based map
// cost a malloc and a free per value of a file of thousands of scalars). Sized for the values the
// caller reserved (one per index entry), never more than half full.
class ValueTable {
 public:
  explicit ValueTable(std::vector<PreparedValue>& values) : values_(values) { resize(values.capacity()); }
  PreparedValue& of(const std::string& tensor) {
    size_t i = slot_of(tensor);
    for (; slots_[i] != kFree; i = next(i))
      if (values_[slots_[i]].tensor == tensor) return values_[slots_[i]];
    values_.emplace_back().tensor = tensor;
    if (2 * values_.size() > slots_.size()) resize(2 * values_.size());  // places the new value too
    else slots_[i] = values_.size() - 1;
    return values_.back();
  }

 private:
  static constexpr size_t kMinSlots = 16;
  static constexpr size_t kFree = SIZE_MAX;
  size_t slot_of(const std::string& tensor) const {
    return std::hash<std::string_view>{}(tensor) & (slots_.size() - 1);
  }
  size_t next(size_t i) const { return (i + 1) & (slots_.size() - 1); }
  // Room for `count` values at most half full, the values there placed again.
  void resize(size_t count) {
    size_t slots = kMinSlots;
    while (slots < 2 * count) slots *= 2;
    slots_.assign(slots, kFree);
    for (size_t v = 0; v < values_.size(); ++v) {
      size_t i = slot_of(values_[v].tensor);
      while (slots_[i] != kFree) i = next(i);
      slots_[i] = v;
    }
  }

  std::vector<PreparedValue>& values_;
  std::vector<size_t> slots_;  // an index into values_, or kFree
};

// Expands a one-element value's derived reductions into explicit columns (a saved reduction
// arrived for it, so its reductions are no longer all its element's).
void expand_scalar_reductions(PreparedValue* v) {
  const double x = v->red[kRedMin];
  const double ax = std::fabs(x);
  const double zero = std::isfinite(x) ? 0.0 : std::numeric_limits<double>::quiet_NaN();
  for (int i = 0; i < kRedCount; ++i) {
    const bool spread = i == kRedStd || i == kRedVariance;
    v->red[i] = spread ? zero : (i == kRedL1 || i == kRedL2) ? ax : x;
    v->red[kRedCount + i] = spread ? zero : ax;
  }
  v->red_src = ReductionSource::kColumns;
}

// Which of a one-element value's reductions, as the views derive them from its element x
// (schema.sql, `reductions`) and expand_scalar_reductions here, are the kernel's: all but l2 when
// x * x over- or underflows, where the kernel's sqrt(x * x) is not |x|.
uint32_t scalar_computed_mask(double x) {
  constexpr uint32_t kL2Bits = 1u << kRedL2 | 1u << (kRedCount + kRedL2);
  return std::sqrt(x * x) == std::fabs(x) ? kAllReductionsMask : kAllReductionsMask & ~kL2Bits;
}

// What a record's value needs computed: a one-element value needs its distribution only when the
// hook saved reductions for its tensor in the same file (merge_record then stores its reductions as
// columns, and its distribution with them).
RecordStatistics statistics_of(const IndexEntry& e, const std::unordered_set<std::string_view>& reduced) {
  return !reduced.empty() && reduced.count(e.tensor) ? RecordStatistics::kCompute
                                                     : RecordStatistics::kComputeButScalarDistribution;
}

// Runs fn(i) for i in [0, n), on this thread and up to `helpers` more (fewer where no thread can
// be had).
template <typename Fn>
void for_each_index(size_t n, size_t helpers, Fn&& fn) {
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i; (i = next.fetch_add(1)) < n;) fn(i);
  };
  std::vector<std::future<void>> running;
  try {
    for (size_t h = 0; h < helpers; ++h) running.push_back(std::async(std::launch::async, work));
  } catch (const std::system_error&) {
  }
  work();
  for (auto& r : running) r.get();
}

// Adds one decoded record to its tensor's value. Serial and in index order, so saved
// reductions and duplicates resolve the same way whatever the threads did.
void merge_record(DecodedRecord& d, const IndexEntry& e, ValueTable& values, PreparedFile& f) {
  const auto error = [&](std::string cause) {
    f.errors.push_back(Status::invalid(std::move(cause)).at(f.file.path, f.file.step));
  };
  if (d.invalid_entry) return;
  if (!d.error.empty()) return error(std::move(d.error));
  if (d.is_reduction) {
    PreparedValue& v = values.of(d.reduced_tensor);
    if (v.red_src == ReductionSource::kScalarElement) expand_scalar_reductions(&v);
    v.red_src = ReductionSource::kColumns;
    v.red[d.reduction_bit] = d.reduction_value;
    v.red_mask |= 1u << d.reduction_bit;
    v.red_computed &= ~(1u << d.reduction_bit);  // the hook's saved one wins
    return;
  }
  PreparedValue& v = values.of(e.tensor);
  if (v.has_raw) return error("tensor '" + e.tensor + "' appears twice in the index");
  v.has_raw = true;
  v.record_offset = e.start;
  v.record_length = e.length;
  v.dtype = d.tensor.dtype;
  v.dims = std::move(d.tensor.dims);
  if (d.has_reductions) {
    const uint32_t saved_mask = v.red_mask;
    double saved[kAllReductions];
    std::memcpy(saved, v.red, sizeof saved);
    if (d.numel == 1 && saved_mask == 0) {
      v.red_src = ReductionSource::kScalarElement;
      v.red[kRedMin] = d.reductions.v[kRedMin];
      v.red_computed = scalar_computed_mask(v.red[kRedMin]);
    } else {
      v.red_src = ReductionSource::kColumns;
      std::memcpy(v.red, d.reductions.v, sizeof d.reductions.v);
      for (int k = 0; k < kAllReductions; ++k)  // the hook's saved reductions win
        if (saved_mask & (1u << k)) v.red[k] = saved[k];
      v.red_computed = kAllReductionsMask & ~saved_mask;
    }
    v.red_mask = kAllReductionsMask;
  }
  v.has_distribution = d.has_distribution;
  v.distribution = std::move(d.distribution);
  if (d.too_large) {
    error(std::move(d.notice));
    v.raw_too_large = true;
  }
  v.blob = std::move(d.blob);
}

// Drops the entries and saved shapes of tensors the selection leaves out or that are stored
// already, so that their records are never read; f.left_out says whether the selection left any.
void leave_out_unselected(IndexFile& idx, const Selection* selection, PreparedFile& f) {
  if (!selection && f.file.stored.empty()) return;
  const auto keep = [&](const std::string& tensor) {
    if (f.file.stored.count(tensor)) return false;
    if (selection && !selection->selects_tensor(tensor)) {
      f.left_out = true;
      return false;
    }
    return true;
  };
  std::erase_if(idx.tensors, [&](const IndexEntry& e) { return !keep(std::string(value_tensor_of(e.tensor))); });
  std::erase_if(idx.shapes, [&](const ShapeEntry& s) { return !keep(s.tensor); });
}

// What an event file that is not (yet) whole means: an error once the trial has ended, else a
// file to look at again on the next pass.
void error_or_wait(std::string cause, const PrepareOptions& opt, PreparedFile& f) {
  if (opt.ended) f.errors.push_back(Status::invalid(std::move(cause)).at(f.file.path, f.file.step));
  else f.status = FileStatus::kWait;
}

// Whether a read of the file failed; if so the failure, after `context`, is the file's error, and
// one that may pass later (kIo) has the file read again next pass (file_problem in source.h).
bool read_failed(const Status& read, const std::string& context, PreparedFile& f) {
  const Status st = file_problem(read);
  if (st.is_ok()) return false;
  f.errors.push_back(st.prefixed(context).at(f.file.path, f.file.step));
  if (st.kind() == ErrorKind::kIo) f.status = FileStatus::kRetry;
  return true;
}

// Reports the entries whose (start, length) cannot describe a record; [*lo, *hi) is the span
// of the others (empty when there is none).
void check_entries(const IndexFile& idx, PreparedFile& f, uint64_t* lo, uint64_t* hi) {
  *lo = UINT64_MAX;
  *hi = 0;
  for (const auto& e : idx.tensors) {
    if (!entry_length_valid(e)) {
      f.errors.push_back(
          Status::invalid("index entry for '" + e.tensor + "' has an invalid record length " + std::to_string(e.length))
              .at(f.file.path, f.file.step));
      continue;
    }
    *lo = std::min(*lo, e.start);
    *hi = std::max(*hi, e.start + e.length);
  }
}

// Whether the valid entries' records fill less than half of the span from the first to the last
// (a selection left out most of the bytes between them): then they are read one by one.
bool records_sparse(const IndexFile& idx) {
  uint64_t lo = UINT64_MAX, hi = 0, bytes = 0;
  for (const auto& e : idx.tensors) {
    if (!entry_length_valid(e)) continue;
    lo = std::min(lo, e.start);
    hi = std::max(hi, e.start + e.length);
    bytes += e.length;
  }
  return hi > lo && bytes < (hi - lo) / 2;
}

// The records of a file the selection took only some of, far apart: each read on its own (on S3 ranged
// GETs of just those records, neighbours merged by read_ranges), so the bytes between them are
// never transferred, and each decoded from its own bytes (blobs are copies: no span is kept).
void prepare_selected_records(TrialSource& src, IndexFile& idx, BudgetTurn& turn, const PrepareOptions& opt,
                              ValueTable& values, PreparedFile& f) {
  uint64_t lo, hi;
  check_entries(idx, f, &lo, &hi);
  if (hi <= lo) return;
  const std::string& ev = *idx.event_file;
  f.event_file = ev;
  std::vector<TrialSource::Range> ranges;
  f.reserved = idx.tensors.size() * kEntryBytes;
  for (const auto& e : idx.tensors) {
    const bool valid = entry_length_valid(e);
    ranges.push_back({ev, valid ? e.start : 0, valid ? e.length : 0});
    f.reserved += ranges.back().length;
  }
  turn.take(f.reserved);
  std::vector<std::optional<ReadBuffer>> records;
  if (read_failed(src.read_ranges(ranges, &records), "cannot read event file " + ev + ": ", f)) return;
  if (std::any_of(records.begin(), records.end(), [](const auto& r) { return !r; })) {
    error_or_wait("event file " + ev + " does not exist", opt, f);
    return;  // its saved shapes are still kept
  }
  std::vector<DecodedRecord> decoded(idx.tensors.size());
  const auto reduced = tensors_with_saved_reductions(idx.tensors);
  for (size_t i = 0; i < decoded.size(); ++i) {
    const IndexEntry& e = idx.tensors[i];
    ReadBuffer& record = *records[i];
    f.bytes += record.size();
    if (record.size() < ranges[i].length && !opt.ended) {
      f.status = FileStatus::kWait;  // the writer has not flushed everything yet
      return;
    }
    decoded[i] = decode_record(e, f.file.step, record, e.start, ev, opt.max_blob_bytes, statistics_of(e, reduced));
    if (opt.store_values) encode_record(decoded[i], opt.compress, record.data(), 0, false);
    else encode_header_only(decoded[i]);
  }
  for (size_t i = 0; i < decoded.size(); ++i) merge_record(decoded[i], idx.tensors[i], values, f);
}

// Reads and decodes the records of idx.tensors into f.values, or sets f.status to kWait when
// the event file is not yet whole.
void prepare_records(TrialSource& src, IndexFile& idx, BudgetTurn& turn, const PrepareOptions& opt, ValueTable& values,
                     PreparedFile& f) {
  uint64_t lo, hi;
  check_entries(idx, f, &lo, &hi);
  if (hi <= lo) return;
  const std::string& ev = *idx.event_file;
  f.event_file = ev;
  f.reserved = hi - lo + idx.tensors.size() * kEntryBytes;
  turn.take(f.reserved);
  // Large spans are mapped (mapped_range.h), small ones read.
  std::unique_ptr<MappedRange> mapped;
  std::unique_ptr<ReadBuffer> owned_span;
  std::string_view span;
  std::optional<ReadBuffer> bytes;
  Status read;
  if (hi - lo >= kMapSpanBytes) read = src.map_range(ev, lo, hi - lo, &mapped);
  if (read.is_ok() && !mapped) read = src.read_range(ev, lo, hi - lo, &bytes);
  if (read_failed(read, "cannot read event file " + ev + ": ", f)) {
    idx.tensors.clear();  // its saved shapes are still kept
    return;
  }
  if (mapped) {
    span = std::string_view(mapped->data(), mapped->size());
  } else {
    if (!bytes) {
      // One error for the file, not one per tensor; saved shapes are still kept.
      error_or_wait("event file " + ev + " does not exist", opt, f);
      if (f.status == FileStatus::kWait) return;
      idx.tensors.clear();
    }
    owned_span = std::make_unique<ReadBuffer>(bytes ? std::move(*bytes) : ReadBuffer());
    span = *owned_span;
  }
  char* const span_data = mapped ? mapped->data() : owned_span->data();
  f.bytes += span.size();
  if (span.size() < hi - lo && !opt.ended) {
    f.status = FileStatus::kWait;  // the writer has not flushed everything yet
    return;
  }
  // Decoding, CRC, reductions and blob encoding are independent per record: a file of big
  // tensors spreads them over several threads.
  std::vector<DecodedRecord> decoded(idx.tensors.size());
  size_t helpers = 0;
  if (span.size() >= kParallelDecodeBytes && decoded.size() > 1 && span.size() / decoded.size() <= kParallelRecordBytes)
    helpers = std::min(decoded.size(), static_cast<size_t>(std::max(1, opt.threads))) - 1;
  const bool in_place = records_disjoint(idx.tensors);
  const auto reduced = tensors_with_saved_reductions(idx.tensors);
  for_each_index(decoded.size(), helpers, [&](size_t i) {
    decoded[i] = decode_record(idx.tensors[i], f.file.step, span, lo, ev, opt.max_blob_bytes,
                               statistics_of(idx.tensors[i], reduced));
    // Before the span can go: the tensors are views into it.
    const bool here = in_place && (!mapped || idx.tensors[i].length >= kInPlaceMappedRecordBytes);
    if (opt.store_values) encode_record(decoded[i], opt.compress, span_data, idx.tensors[i].start - lo, here);
    else encode_header_only(decoded[i]);
  });
  if (mapped && mapped->shrank()) {
    // Truncated while it was decoded (mapped_range.h): what was read may be zeros. The next
    // pass reads the file as it then is.
    f.status = FileStatus::kWait;
    return;
  }
  const bool any_in_place =
      std::any_of(decoded.begin(), decoded.end(), [](const DecodedRecord& d) { return d.blob.in_span.data(); });
  if (any_in_place) {  // kept until the writer has stored the blobs
    f.span = std::move(owned_span);
    f.mapped_span = std::move(mapped);
    if (f.mapped_span) f.mapped_file = ev;
  }
  for (size_t i = 0; i < decoded.size(); ++i) merge_record(decoded[i], idx.tensors[i], values, f);
}

}  // namespace

PreparedFile prepare_file(TrialSource& src, const PendingFile& file, size_t ticket, const PrepareOptions& opt) {
  BudgetTurn turn(opt.budget, ticket);
  PreparedFile f;
  f.file = file;
  std::optional<ReadBuffer> text;
  if (read_failed(read_at_most(src, file.path, kMaxIndexFileBytes, &text), "cannot read the index file: ", f)) return f;
  if (!text) {
    f.status = FileStatus::kWait;  // listed, then gone: look again next pass
    return f;
  }
  f.bytes += text->size();
  IndexFile idx;
  if (Status st = parse_index_json(*text, &idx); !st.is_ok()) {
    // A live writer may not have finished the JSON yet; an ended trial's index is final.
    if (opt.ended) f.errors.push_back(st.at(file.path, file.step));
    else f.status = FileStatus::kWait;
    return f;
  }
  f.index_valid = true;
  f.mode = idx.mode;
  f.mode_step = idx.mode_step;
  for (auto& why : idx.skipped) f.errors.push_back(Status::invalid(std::move(why)).at(file.path, file.step));

  leave_out_unselected(idx, opt.selection, f);
  f.values.reserve(idx.tensors.size() + idx.shapes.size());  // ValueTable's size
  ValueTable values(f.values);
  if (!idx.tensors.empty()) {
    if ((f.left_out || !f.file.stored.empty()) && records_sparse(idx))
      prepare_selected_records(src, idx, turn, opt, values, f);
    else prepare_records(src, idx, turn, opt, values, f);
    if (f.status != FileStatus::kReady) return f;
  }
  for (auto& s : idx.shapes) {
    PreparedValue& v = values.of(s.tensor);
    v.has_shape = true;
    v.saved_shape = std::move(s.shape);
  }
  for (auto& v : f.values) {
    // smdebug reports a 0-d value's shape as [1]; the blob keeps the true 0-d shape.
    if (v.has_raw) v.shape_text = v.dims.empty() ? "[1]" : shape_json(v.dims.data(), static_cast<int>(v.dims.size()));
    else if (v.has_shape) v.shape_text = shape_json(v.saved_shape.data(), static_cast<int>(v.saved_shape.size()));
  }
  return f;
}

}  // namespace trialdb
