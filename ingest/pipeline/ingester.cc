#include "ingest/pipeline/ingester.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <condition_variable>
#include <future>
#include <limits>
#include <mutex>
#include <thread>

#include <nlohmann/json.hpp>

#include "ingest/format/collections_file.h"
#include "ingest/format/event_decoder.h"
#include "ingest/format/index_file.h"
#include "ingest/format/tfrecord.h"
#include "ingest/store/bulk_load.h"
#include "schema/py_regex.h"
#include "schema/reductions.h"
#include "schema/value_blob.h"
#include "ingest/store/wal_checkpointer.h"

namespace trialdb {

namespace {

constexpr std::string_view kReductionsPrefix = "smdebug/reductions/";
constexpr size_t kInlineBlobBytes = 128;            // blobs up to this size are stored in value.data
// Records at least this large leave their tensor_content in the span (decode_event's borrowing):
// below it the copy costs less than the wire walk that avoids it.
constexpr size_t kBorrowContentBytes = 64u << 10;
// INSERT INTO value: ?1..?4 are shared by every row of a statement (trial, step numbering, worker:
// one file's values), then kRowParams per row, so a row costs 4 binds fewer.
constexpr int kSharedParams = 4;
constexpr int kRowParams = 25;
constexpr int kScalarRowParams = 4;   // a one-element value of shape [1]: the rest are constants
constexpr size_t kValueBatch = 32;                  // rows per multi-row INSERT
constexpr size_t kCommitBytes = 64u << 20;          // commit a transaction after this many bytes...
constexpr size_t kCommitFiles = 256;                // ...or this many files
// A bulk load (while in effect: another connection may switch the file back to WAL) commits
// less often: each commit's fdatasync waits for the device to finish the writes before it
// (~35 ms here, a quarter of the time 256 MiB takes to ingest), and nobody reads the database
// meanwhile. 1 GB of large tensors: 1.00 -> 0.77 s.
constexpr size_t kBulkCommitBytes = size_t{1} << 30;
constexpr size_t kBulkCommitFiles = 4096;
constexpr uint64_t kReadAheadBytes = 640u << 20;    // event bytes read ahead of the writer: the file
                                                    // being written and the next, up to ~300 MiB each
constexpr uint64_t kMapSpanBytes = 1u << 20;        // spans this large are mapped, not read
constexpr size_t kParallelDecodeBytes = 16u << 20;  // files larger than this decode on several threads...
constexpr size_t kParallelRecordBytes = 64u << 20;  // ...unless their records are larger (memory: 2x a record each)

double now_unix() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// A value blob (docs/BLOB_FORMAT.md), built on a preparing thread: bytes of its own, or where it
// was built in place in the event file's span (PreparedFile::span keeps that alive).
struct ValueBlob {
  std::string owned;
  std::string_view in_span;
  std::string_view bytes() const { return in_span.data() ? in_span : std::string_view(owned); }
};

// One tensor's contribution to one (step, worker): raw value, saved shape, reductions.
struct PreparedValue {
  std::string tensor;
  bool has_raw = false;
  DType dtype = DType::Float32;
  std::vector<int64_t> dims;
  ValueBlob blob;
  bool raw_too_large = false;      // has_raw, but the value exceeds SQLite's length limit: no blob
  bool has_shape = false;          // a saved shape (shape_payload) when there is no raw value
  std::vector<int64_t> saved_shape;
  std::string shape_text;          // value.shape, built on a preparing thread (the writer binds it)
  int red_src = 0;                 // as value.red_src
  uint32_t red_mask = 0;
  double red[kAllReductions] = {};
};

}  // namespace

// A value row on its way into the value table (Ingester::write_values).
struct ValueRow {
  PreparedValue* value;
  int64_t tensor_id;
  int64_t value_id;                // value_blob row, when apart
  bool inline_blob;                // the blob goes into value.data
  bool apart() const { return value->has_raw && !value->raw_too_large && !inline_blob; }   // into value_blob
};

enum class FileStatus { kReady, kWait };

struct PreparedFile {
  std::string path;
  int64_t step = 0;
  std::string worker;
  FileStatus status = FileStatus::kReady;
  Mode mode = Mode::kGlobal;
  int64_t mode_step = 0;
  std::vector<PreparedValue> values;
  std::vector<IngestIssue> errors;
  uint64_t bytes = 0;
  uint64_t reserved = 0;           // share of the ReadBudget, released once written
  // The event bytes, read or mapped, while blobs are built in place in them.
  std::unique_ptr<std::string> span;
  std::unique_ptr<MappedRange> mapped_span;
  std::string mapped_file;         // the event file mapped_span is of
  bool index_valid = false;        // false: only errors to record, no step data
};

namespace {
// What --strict stops with: the issue as a Status ("<file> (step N): <message>" printed).
Status strict_stop(const IngestIssue& e) {
  return Status::invalid(e.message).at(e.file, e.step >= 0 ? e.step : Status::kNoStep);
}
}  // namespace

namespace {

// Bounds the event bytes that files being prepared hold ahead of the writer, so a trial of big
// tensors never has a window of them in memory at once. Files take their share in order: the
// file the writer waits for always gets its turn, and one larger than the limit runs alone.
class ReadBudget {
 public:
  explicit ReadBudget(uint64_t limit) : limit_(limit) {}
  void acquire(size_t ticket, uint64_t bytes) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return aborted_ || (next_ == ticket && (in_use_ == 0 || in_use_ + bytes <= limit_)); });
    in_use_ += bytes;
    ++next_;
    cv_.notify_all();
  }
  void release(uint64_t bytes) {
    std::lock_guard<std::mutex> lock(mu_);
    in_use_ -= bytes;
    cv_.notify_all();
  }
  void abort() {   // the writer stopped: nobody waits for a share any more
    std::lock_guard<std::mutex> lock(mu_);
    aborted_ = true;
    cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  uint64_t limit_, in_use_ = 0;
  size_t next_ = 0;
  bool aborted_ = false;
};

// One file's turn at the budget; a file that reads no event bytes passes its turn on.
struct BudgetTurn {
  ReadBudget* budget;
  size_t ticket;
  bool taken = false;
  void take(uint64_t bytes) {
    budget->acquire(ticket, bytes);
    taken = true;
  }
  ~BudgetTurn() {
    if (!taken) budget->acquire(ticket, 0);
  }
};

}  // namespace

std::string default_trial_name(const std::string& location) {
  std::string s = location;
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  size_t slash = s.rfind('/');
  std::string base = slash == std::string::npos ? s : s.substr(slash + 1);
  return base.empty() ? s : base;
}

namespace {

// "smdebug/reductions/abs_l2/grad/x" -> ("grad/x", l2, abs).
bool parse_reduction_name(const std::string& name, std::string* tensor, int* index, bool* abs) {
  if (name.compare(0, kReductionsPrefix.size(), kReductionsPrefix) != 0) return false;
  size_t start = kReductionsPrefix.size();
  size_t slash = name.find('/', start);
  if (slash == std::string::npos || slash + 1 >= name.size()) return false;
  std::string red = name.substr(start, slash - start);
  *abs = red.compare(0, 4, "abs_") == 0;
  if (*abs) red = red.substr(4);
  *index = reduction_index(red);
  if (*index < 0) return false;
  *tensor = name.substr(slash + 1);
  return true;
}

// Expands a one-element value's derived reductions into explicit columns.
void expand_scalar_reductions(PreparedValue* v) {
  double x = v->red[kRedMin];
  double ax = std::fabs(x);
  double zero = std::isfinite(x) ? 0.0 : std::numeric_limits<double>::quiet_NaN();
  for (int i = 0; i < kRedCount; ++i) {
    v->red[i] = (i == kRedStd || i == kRedVariance) ? zero : (i == kRedL1 || i == kRedL2) ? ax : x;
    v->red[kRedCount + i] = (i == kRedStd || i == kRedVariance) ? zero : ax;
  }
  v->red_src = 1;
}

// The value of `tensor` in values, added if new. `where` holds views of the names stored in
// values, so values must never reallocate: prepare_file reserves one slot per index entry.
PreparedValue& value_for(std::vector<PreparedValue>& values, std::unordered_map<std::string_view, size_t>& where,
                         const std::string& tensor) {
  auto it = where.find(tensor);
  if (it != where.end()) return values[it->second];
  values.emplace_back();
  values.back().tensor = tensor;
  where.emplace(values.back().tensor, values.size() - 1);
  return values.back();
}

// Frees a decoded tensor's bytes (or forgets its view), keeping what describes it.
void release_bytes(DecodedTensor& t) {
  std::string().swap(t.data);
  t.borrowed = {};
}

// One index entry's record, checked, decoded, reduced and encoded: the per-record work of
// prepare_file, free of shared state so records can be decoded on several threads.
struct DecodedEntry {
  bool skip = false;               // invalid length, reported when the index was read
  std::string error;               // non-empty: the record is unusable, and why
  bool is_reduction = false;       // a saved reduction ("smdebug/reductions/<red>/<base>")
  std::string base;
  int ridx = 0;
  bool abs = false;
  double red_value = 0;
  // The decoded value: dtype, dims, and its bytes until encode_entry turns them into blob (the
  // decoder's, or for a large tensor_content a view into the event file's span).
  DecodedTensor tensor;
  int64_t numel = 0;
  bool has_reductions = false;
  Reductions red;
  bool too_large = false;          // over SQLite's length limit: notice says so, no blob
  std::string notice;
  ValueBlob blob;
};

DecodedEntry decode_entry(const IndexEntry& e, std::string_view span, uint64_t lo, const std::string& ev,
                          uint64_t max_blob_bytes) {
  DecodedEntry d;
  if (e.length < kRecordOverhead || e.start > UINT64_MAX - e.length) {
    d.skip = true;
    return d;
  }
  if (e.start + e.length - lo > span.size()) {
    d.error = "tensor '" + e.tensor + "': record at offset " + std::to_string(e.start) + " (+" +
              std::to_string(e.length) + ") is past the end of " + ev + " (" + std::to_string(lo + span.size()) +
              " bytes)";
    return d;
  }
  RecordResult r = parse_record(span.substr(e.start - lo, e.length));
  if (!r.status.is_ok() || r.consumed != e.length) {
    std::string why = r.status.kind() == ErrorKind::kInvalidInput
                          ? r.status.cause()
                          : "record length field does not match the index length " + std::to_string(e.length);
    d.error = "tensor '" + e.tensor + "' in " + ev + " at offset " + std::to_string(e.start) + ": " + why;
    return d;
  }
  std::vector<DecodedTensor> decoded;
  if (Status st = decode_event(r.payload, &decoded, kBorrowContentBytes); !st.is_ok()) {
    d.error = "tensor '" + e.tensor + "' in " + ev + " at offset " + std::to_string(e.start) + ": " + st.cause();
    return d;
  }
  if (decoded.empty()) {
    d.error = "tensor '" + e.tensor + "' in " + ev + ": record holds no tensor";
    return d;
  }
  DecodedTensor& t = decoded.front();   // smdebug writes one value per record
  TensorView tv;
  tv.dtype = t.dtype;
  tv.ndim = static_cast<int>(t.dims.size());
  tv.numel = shape_numel(t.dims.data(), tv.ndim);
  const std::string_view bytes = t.bytes();
  tv.data = reinterpret_cast<const uint8_t*>(bytes.data());
  tv.data_bytes = bytes.size();
  if (parse_reduction_name(e.tensor, &d.base, &d.ridx, &d.abs)) {
    if (!dtype_is_real(t.dtype) || tv.numel < 1) {
      d.error = "reduction '" + e.tensor + "' is not a numeric scalar";
      return d;
    }
    d.is_reduction = true;
    d.red_value = element_as_double(tv, 0);
    return d;
  }
  d.numel = tv.numel;
  // Reductions are offered where smdebug can read the value (parity with its Trial API);
  // tensor_reduce() answers for the rest.
  d.has_reductions = t.smdebug_readable && compute_reductions(tv, &d.red);
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

// The value blob of a decoded entry, its raw bytes released. A large tensor's bytes are a view
// into the event file's span (tensor_content_split.h); uncompressed, its blob is then built in
// place: the blob header is written over the bytes just before them in the same record (its
// framing and the event's other fields, all decoded by now), so header + bytes are the blob and
// the tensor is never copied between the file and SQLite's pages. Needs `in_place` (no other
// entry's record overlaps this one) and room in the record; otherwise the blob is a copy.
void encode_entry(DecodedEntry& d, bool compress, BufferPool* pool, char* span, size_t record_start, bool in_place) {
  if (d.is_reduction || d.too_large || !d.error.empty() || d.skip) return;
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
  d.blob.owned = pool->take(kBlobHeaderFixed + 8 * t.dims.size() + raw.size());
  encode_blob(&d.blob.owned, t.dtype, t.dims.data(), ndim, raw.data(), raw.size(), compress);
  release_bytes(d.tensor);
}

// Whether the valid entries' records are disjoint, so blobs may be built in place in them (a
// damaged index may point two entries into one record).
bool records_disjoint(const std::vector<IndexEntry>& entries) {
  std::vector<std::pair<uint64_t, uint64_t>> ranges;
  for (const auto& e : entries)
    if (e.length >= kRecordOverhead && e.start <= UINT64_MAX - e.length) ranges.emplace_back(e.start, e.start + e.length);
  std::sort(ranges.begin(), ranges.end());
  for (size_t i = 1; i < ranges.size(); ++i)
    if (ranges[i].first < ranges[i - 1].second) return false;
  return true;
}

// Reads, checks and decodes one index file and the records it points at. Runs on a worker thread:
// touches only the source and its own result.
PreparedFile prepare_file(TrialSource& src, const std::string& path, int64_t step, const std::string& worker,
                          bool ended, bool compress, int threads, uint64_t max_blob_bytes, ReadBudget* budget,
                          BufferPool* pool, size_t ticket) {
  BudgetTurn turn{budget, ticket};
  PreparedFile f;
  f.path = path;
  f.step = step;
  f.worker = worker;
  auto wait_or_error = [&](const std::string& why) {
    if (ended) f.errors.push_back({path, step, why});
    else f.status = FileStatus::kWait;
  };
  std::optional<std::string> text = src.read(path);
  if (!text) {
    f.status = FileStatus::kWait;   // listed, then gone: look again next pass
    return f;
  }
  f.bytes += text->size();
  IndexFile idx;
  if (Status st = parse_index_json(*text, &idx); !st.is_ok()) {
    // A live writer may not have finished the JSON yet; an ended trial's index is final.
    wait_or_error(st.cause());
    return f;
  }
  f.index_valid = true;
  f.mode = idx.mode;
  f.mode_step = idx.mode_step;
  for (auto& why : idx.skipped) f.errors.push_back({path, step, std::move(why)});

  std::vector<PreparedValue>& values = f.values;
  values.reserve(idx.tensors.size() + idx.shapes.size());   // value_for keeps views of the names
  std::unordered_map<std::string_view, size_t> where;
  where.reserve(values.capacity());

  if (!idx.tensors.empty()) {
    uint64_t lo = UINT64_MAX, hi = 0;
    for (const auto& e : idx.tensors) {
      if (e.length < kRecordOverhead || e.start > UINT64_MAX - e.length) {
        f.errors.push_back({path, step, "index entry for '" + e.tensor + "' has an invalid record length " +
                                            std::to_string(e.length)});
        continue;
      }
      lo = std::min(lo, e.start);
      hi = std::max(hi, e.start + e.length);
    }
    if (hi > lo) {
      const std::string& ev = *idx.event_file;
      turn.take(hi - lo);
      f.reserved = hi - lo;
      // Large spans are mapped (mapped_range.h), small ones read into a pooled buffer.
      std::unique_ptr<MappedRange> mapped = hi - lo >= kMapSpanBytes ? src.map_range(ev, lo, hi - lo) : nullptr;
      std::unique_ptr<std::string> owned_span;
      std::string_view span;
      if (mapped) {
        span = std::string_view(mapped->data(), mapped->size());
      } else {
        owned_span = std::make_unique<std::string>(pool->take(hi - lo));
        if (!src.read_range_into(ev, lo, hi - lo, owned_span.get())) {
          // One error for the file, not one per tensor; saved shapes are still kept.
          wait_or_error("event file " + ev + " does not exist");
          if (f.status == FileStatus::kWait) return f;
          idx.tensors.clear();
          owned_span->clear();
        }
        span = *owned_span;
      }
      char* const span_data = mapped ? mapped->data() : owned_span->data();
      f.bytes += span.size();
      if (span.size() < hi - lo && !ended) {
        f.status = FileStatus::kWait;   // the writer has not flushed everything yet
        return f;
      }
      // Decoding, CRC, reductions and blob encoding are independent per record: a file of big
      // tensors spreads them over several threads. Merging into values stays serial, in index
      // order, so saved reductions and duplicates resolve exactly as before.
      std::vector<DecodedEntry> decoded(idx.tensors.size());
      size_t helpers = 0;
      if (span.size() >= kParallelDecodeBytes && decoded.size() > 1 &&
          span.size() / decoded.size() <= kParallelRecordBytes)
        helpers = std::min(decoded.size(), static_cast<size_t>(std::max(1, threads))) - 1;
      auto for_each_entry = [&](auto&& fn) {   // fn(i) for every entry, on this thread and the helpers
        std::atomic<size_t> next{0};
        auto work = [&] {
          for (size_t i; (i = next.fetch_add(1)) < decoded.size();) fn(i);
        };
        std::vector<std::future<void>> running;
        for (size_t h = 0; h < helpers; ++h) running.push_back(std::async(std::launch::async, work));
        work();
        for (auto& r : running) r.get();
      };
      const bool in_place = records_disjoint(idx.tensors);
      bool any_in_place = false;
      for_each_entry([&](size_t i) {
        decoded[i] = decode_entry(idx.tensors[i], span, lo, ev, max_blob_bytes);
        // Before the span can go: large tensors are views into it.
        encode_entry(decoded[i], compress, pool, span_data, idx.tensors[i].start - lo, in_place);
      });
      if (mapped && mapped->shrank()) {
        // Truncated while it was decoded (mapped_range.h): what was read may be zeros. The next
        // pass reads the file as it then is.
        f.status = FileStatus::kWait;
        return f;
      }
      for (const DecodedEntry& d : decoded) any_in_place |= d.blob.in_span.data() != nullptr;
      if (any_in_place) {   // kept until the writer has stored the blobs
        f.span = std::move(owned_span);
        f.mapped_span = std::move(mapped);
        if (f.mapped_span) f.mapped_file = ev;
      } else if (owned_span) {
        pool->give(std::move(*owned_span));
      }
      for (size_t i = 0; i < decoded.size(); ++i) {
        DecodedEntry& d = decoded[i];
        const IndexEntry& e = idx.tensors[i];
        if (d.skip) continue;
        if (!d.error.empty()) {
          f.errors.push_back({path, step, std::move(d.error)});
          continue;
        }
        if (d.is_reduction) {
          PreparedValue& v = value_for(values, where, d.base);
          if (v.red_src == 2) expand_scalar_reductions(&v);
          v.red_src = 1;
          int bit = d.ridx + (d.abs ? kRedCount : 0);
          v.red[bit] = d.red_value;
          v.red_mask |= 1u << bit;
          continue;
        }
        PreparedValue& v = value_for(values, where, e.tensor);
        if (v.has_raw) {
          f.errors.push_back({path, step, "tensor '" + e.tensor + "' appears twice in the index"});
          continue;
        }
        v.has_raw = true;
        v.dtype = d.tensor.dtype;
        v.dims = std::move(d.tensor.dims);
        if (d.has_reductions) {
          uint32_t saved_mask = v.red_mask;
          double saved[kAllReductions];
          std::memcpy(saved, v.red, sizeof saved);
          if (d.numel == 1 && saved_mask == 0) {
            v.red_src = 2;
            v.red[kRedMin] = d.red.v[kRedMin];
          } else {
            v.red_src = 1;
            std::memcpy(v.red, d.red.v, sizeof d.red.v);
            for (int k = 0; k < kAllReductions; ++k)   // the hook's saved reductions win
              if (saved_mask & (1u << k)) v.red[k] = saved[k];
          }
          v.red_mask = kAllReductionsMask;
        }
        if (d.too_large) {
          f.errors.push_back({path, step, std::move(d.notice)});
          v.raw_too_large = true;
        }
        v.blob = std::move(d.blob);
      }
    }
  }
  for (auto& s : idx.shapes) {
    PreparedValue& v = value_for(values, where, s.tensor);
    v.has_shape = true;
    v.saved_shape = std::move(s.shape);
  }
  for (auto& v : values) {
    // smdebug reports a 0-d value's shape as [1]; the blob keeps the true 0-d shape.
    if (v.has_raw) v.shape_text = v.dims.empty() ? "[1]" : shape_json(v.dims.data(), static_cast<int>(v.dims.size()));
    else if (v.has_shape) v.shape_text = shape_json(v.saved_shape.data(), static_cast<int>(v.saved_shape.size()));
  }
  return f;
}

}  // namespace

Ingester::Ingester(Database& db, TrialSource& source, IngestOptions options)
    : db_(db), source_(source), opt_(std::move(options)), pool_(kReadAheadBytes / 2) {
  name_ = opt_.name.empty() ? default_trial_name(source_.root()) : opt_.name;
  open_trial();
}

Ingester::~Ingester() = default;

void Ingester::open_trial() {
  {
    Statement q(db_.handle(), "SELECT trial_id, path FROM trial WHERE name = ?");
    q.bind(1, name_);
    if (q.step()) {
      trial_id_ = q.int64(0);
      if (q.text(1) != source_.root())
        throw Error(Status::usage("trial '" + name_ + "' already exists in " + db_.path() + " from " + q.text(1) +
                                  "; use --name to ingest " + source_.root() + " under another name"));
    }
  }
  if (!trial_id_) {
    Statement ins(db_.handle(), "INSERT INTO trial(name, path) VALUES (?, ?) ON CONFLICT(name) DO NOTHING");
    ins.bind(1, name_).bind(2, source_.root()).run();
    Statement q(db_.handle(), "SELECT trial_id FROM trial WHERE name = ?");
    q.bind(1, name_);
    q.step();
    trial_id_ = q.int64(0);
  }
  Statement t(db_.handle(), "SELECT name, tensor_id FROM tensor WHERE trial_id = ?");
  t.bind(1, trial_id_);
  while (t.step()) tensors_[t.text(0)] = t.int64(1);
  Statement w(db_.handle(), "SELECT name, worker_id FROM worker WHERE trial_id = ?");
  w.bind(1, trial_id_);
  while (w.step()) workers_[w.text(0)] = w.int64(1);
  Statement f(db_.handle(), "SELECT path FROM ingested_file WHERE trial_id = ?");
  f.bind(1, trial_id_);
  while (f.step()) ingested_.insert(f.text(0));
  Statement e(db_.handle(), "SELECT expected_workers FROM trial WHERE trial_id = ?");
  e.bind(1, trial_id_);
  e.step();
  expected_workers_ = static_cast<int>(e.int64(0));
}

int64_t Ingester::worker_id(const std::string& name) {
  auto it = workers_.find(name);
  if (it != workers_.end()) return it->second;
  Statement ins(db_.handle(), "INSERT INTO worker(trial_id, name) VALUES (?, ?) ON CONFLICT DO NOTHING");
  ins.bind(1, trial_id_).bind(2, name).run();
  Statement q(db_.handle(), "SELECT worker_id FROM worker WHERE trial_id = ? AND name = ?");
  q.bind(1, trial_id_).bind(2, name);
  q.step();
  return workers_[name] = q.int64(0);
}

int64_t Ingester::tensor_id(const std::string& name) {
  auto it = tensors_.find(name);
  if (it != tensors_.end()) return it->second;
  Statement ins(db_.handle(), "INSERT INTO tensor(trial_id, name) VALUES (?, ?) ON CONFLICT DO NOTHING");
  ins.bind(1, trial_id_).bind(2, name).run();
  bool created = sqlite3_changes(db_.handle()) > 0;
  Statement q(db_.handle(), "SELECT tensor_id FROM tensor WHERE trial_id = ? AND name = ?");
  q.bind(1, trial_id_).bind(2, name);
  q.step();
  int64_t id = tensors_[name] = q.int64(0);
  if (created) add_memberships(id, name);
  return id;
}

void Ingester::add_memberships(int64_t id, const std::string& name) {
  Statement ins(db_.handle(), "INSERT OR IGNORE INTO collection_member(collection_id, tensor_id) VALUES (?, ?)");
  for (const auto& c : collections_) {
    bool member = c.tensor_names.count(name) > 0;
    for (size_t i = 0; !member && i < c.regexes.size(); ++i) member = c.regexes[i]->search(name);
    if (member) ins.bind(1, c.id).bind(2, id).run();
  }
}

void Ingester::record_error(const IngestIssue& e, IngestStats* stats) {
  stats->errors.push_back(e);
  Statement ins(db_.handle(),
                "INSERT INTO ingest_error(trial_id, file, step, message) SELECT ?1, ?2, ?3, ?4 "
                "WHERE NOT EXISTS (SELECT 1 FROM ingest_error WHERE trial_id = ?1 AND file = ?2 AND message = ?4)");
  ins.bind(1, trial_id_).bind(2, e.file);
  if (e.step >= 0) ins.bind(3, e.step);
  else ins.bind_null(3);
  ins.bind(4, e.message).run();
}

// Reads every collections file, merges them by name (union over workers), and re-resolves
// membership for all tensors when a definition changed.
void Ingester::load_collections(bool ended, IngestStats* stats) {
  std::vector<SourceFile> files = source_.list("collections/");
  std::map<std::string, std::pair<std::set<std::string>, std::set<std::string>>> merged;  // regexes, names
  std::vector<IngestIssue> issues;
  int files_seen = 0, meta_workers = 0;
  for (const auto& f : files) {
    if (!is_collections_path(f.path)) continue;
    ++files_seen;
    std::optional<std::string> text = source_.read(f.path);
    if (!text) continue;
    CollectionsFile cf;
    if (Status st = parse_collections_json(*text, &cf); !st.is_ok()) {
      if (ended) issues.push_back({f.path, -1, st.cause()});
      continue;
    }
    meta_workers = std::max(meta_workers, cf.num_workers);
    for (auto& c : cf.collections) {
      auto& m = merged[c.name];
      m.first.insert(c.include_regex.begin(), c.include_regex.end());
      m.second.insert(c.tensor_names.begin(), c.tensor_names.end());
    }
  }
  Transaction tx(db_);
  for (const auto& e : issues) record_error(e, stats);
  int expected = std::max(files_seen, meta_workers);
  if (expected != expected_workers_) {
    Statement u(db_.handle(), "UPDATE trial SET expected_workers = ? WHERE trial_id = ?");
    u.bind(1, expected).bind(2, trial_id_).run();
    expected_workers_ = expected;
  }
  bool changed = false;
  std::vector<Collection> loaded;
  for (const auto& [name, m] : merged) {
    nlohmann::json def = {{"include_regex", std::vector<std::string>(m.first.begin(), m.first.end())},
                          {"tensor_names", std::vector<std::string>(m.second.begin(), m.second.end())}};
    std::string text = def.dump();
    Statement q(db_.handle(), "SELECT collection_id, definition FROM collection WHERE trial_id = ? AND name = ?");
    q.bind(1, trial_id_).bind(2, name);
    Collection c;
    c.name = name;
    if (q.step()) {
      c.id = q.int64(0);
      if (q.text(1) != text) {
        Statement u(db_.handle(), "UPDATE collection SET definition = ? WHERE collection_id = ?");
        u.bind(1, text).bind(2, c.id).run();
        changed = true;
      }
    } else {
      Statement ins(db_.handle(), "INSERT INTO collection(trial_id, name, definition) VALUES (?, ?, ?)");
      ins.bind(1, trial_id_).bind(2, name).bind(3, text).run();
      c.id = db_.last_insert_rowid();
      changed = true;
    }
    c.tensor_names = m.second;
    for (const auto& r : m.first) {
      std::unique_ptr<PyRegex> re;
      if (Status st = PyRegex::compile(r, &re); st.is_ok()) c.regexes.push_back(std::move(re));
      else record_error({"collections/", -1, "collection '" + name + "': " + st.cause()}, stats);
    }
    loaded.push_back(std::move(c));
  }
  collections_ = std::move(loaded);
  if (changed) {
    Statement del(db_.handle(),
                  "DELETE FROM collection_member WHERE collection_id IN (SELECT collection_id FROM collection WHERE trial_id = ?)");
    del.bind(1, trial_id_).run();
    for (const auto& [name, id] : tensors_) add_memberships(id, name);
  }
  tx.commit();
}

std::string Ingester::list_start_after() {
  // Index files of complete steps are final: a repeated listing starts after the last of them,
  // and before any file left waiting.
  Statement q(db_.handle(),
              "SELECT max(f.path) FROM ingested_file f WHERE f.trial_id = ?1 AND f.path < "
              "(SELECT coalesce(min(printf('index/%09d/%012d', s.step / 1000, s.step)), 'index/~') FROM step s "
              "WHERE s.trial_id = ?1 AND s.complete = 0) "
              "AND f.path < (SELECT coalesce(min(path), 'index/~') FROM waiting_file w WHERE w.trial_id = ?1)");
  q.bind(1, trial_id_);
  if (q.step() && !q.is_null(0)) return q.text(0);
  return "";
}

// A global step has one mode: a worker whose index disagrees with what another worker wrote is
// reported (its values are kept, filed under the step's first mode, as smdebug's reader does).
void Ingester::check_step_mode(PreparedFile& f) {
  Statement& q = file_statements().step_mode;
  q.bind(1, trial_id_).bind(2, f.step);
  if (!q.step()) {
    q.reset();
    return;
  }
  std::string mode = q.text(0);
  int64_t mode_step = q.int64(1);
  q.reset();
  if (mode == mode_name(f.mode) && mode_step == f.mode_step) return;
  f.errors.push_back({f.path, f.step, "worker " + f.worker + " says step " + std::to_string(f.step) + " is " +
                                          mode_name(f.mode) + " step " + std::to_string(f.mode_step) +
                                          " but another worker wrote it as " + mode + " step " +
                                          std::to_string(mode_step) + "; kept as " + mode});
}

// The statements of writing one file, prepared once per ingester: trials of many small files
// would otherwise pay a prepare per statement per file.
Ingester::FileStatements& Ingester::file_statements() {
  if (!file_statements_) {
    const std::string insert_value =
        "INTO value(trial_id, tensor_id, tensor_step, step_offset, worker_id, dtype, shape, red_src, red_mask, "
        "r_min, r_max, r_mean, r_prod, r_std, r_variance, r_sum, r_l1, r_l2, "
        "ra_min, ra_max, ra_mean, ra_prod, ra_std, ra_variance, ra_sum, ra_l1, ra_l2, data, value_id) VALUES ";
    // Row i: trial_id, tensor_id, tensor_step, step_offset, worker_id, then the rest in order.
    auto row = [](size_t i) {
      const int b = kSharedParams + static_cast<int>(i) * kRowParams;
      std::string r = "(?1,?" + std::to_string(b + 1) + ",?2,?3,?4";
      for (int k = 2; k <= kRowParams; ++k) r += ",?" + std::to_string(b + k);
      return r + ")";
    };
    const std::string one_row = row(0);
    std::string batch = insert_value + one_row;
    for (size_t i = 1; i < kValueBatch; ++i) {
      batch += ',';
      batch += row(i);
    }
    // Scalars (the bulk of many trials): tensor_id, dtype, the element (r_min, red_src 2) and the
    // inline blob; shape, red_src and red_mask are literals, the other columns NULL.
    std::string scalars =
        "INSERT OR IGNORE INTO value(trial_id, tensor_id, tensor_step, step_offset, worker_id, dtype, shape, "
        "red_src, red_mask, r_min, data) VALUES ";
    for (size_t i = 0; i < kValueBatch; ++i) {
      const int b = kSharedParams + static_cast<int>(i) * kScalarRowParams;
      scalars += (i ? ",(?1,?" : "(?1,?") + std::to_string(b + 1) + ",?2,?3,?4,?" + std::to_string(b + 2) +
                 ",'[1]',2,0,?" + std::to_string(b + 3) + ",?" + std::to_string(b + 4) + ")";
    }
    sqlite3* h = db_.handle();
    file_statements_.reset(new FileStatements{
        Statement(h, "SELECT 1 FROM ingested_file WHERE trial_id = ? AND path = ?"),
        Statement(h, "INSERT INTO ingested_file(trial_id, path) VALUES (?, ?)"),
        Statement(h, "SELECT mode, mode_step, tensor_step FROM step WHERE trial_id = ? AND step = ?"),
        Statement(h, "INSERT INTO step(trial_id, step, mode, mode_step, tensor_step) VALUES (?, ?, ?, ?, ?) "
                     "ON CONFLICT DO NOTHING"),
        Statement(h, "INSERT OR IGNORE INTO step_worker(trial_id, step, worker_id) VALUES (?, ?, ?)"),
        Statement(h, "INSERT " + insert_value + one_row),
        Statement(h, "INSERT OR IGNORE " + insert_value + one_row),
        Statement(h, "INSERT OR IGNORE " + batch),
        Statement(h, scalars),
        Statement(h, "SELECT 1 FROM step_worker WHERE trial_id = ? AND step = ? AND worker_id = ?"),
        Statement(h, "INSERT INTO value_blob(value_id, data) VALUES (?, ?)"),
        Statement(h, "SELECT coalesce(max(value_id), 0) FROM value_blob"),
    });
  }
  return *file_statements_;
}

void Ingester::mark_ingested(const std::string& path) {
  file_statements().mark_ingested.bind(1, trial_id_).bind(2, path).run();
  ingested_.insert(path);
  if (waiting_.erase(path)) {
    Statement d(db_.handle(), "DELETE FROM waiting_file WHERE trial_id = ? AND path = ?");
    d.bind(1, trial_id_).bind(2, path).run();
  }
}

// Called only for a file not yet in waiting_, inside the pass's transaction.
void Ingester::mark_waiting(const std::string& path) {
  waiting_.insert(path);
  Statement i(db_.handle(), "INSERT OR IGNORE INTO waiting_file(trial_id, path) VALUES (?, ?)");
  i.bind(1, trial_id_).bind(2, path).run();
}

namespace {
// Binds ?1..?4 of an INSERT INTO value: what every row of one file shares.
void bind_shared(Statement& ins, int64_t trial_id, int64_t tensor_step, int64_t step, int64_t worker_id) {
  ins.bind(1, trial_id).bind(2, tensor_step).bind(3, step - tensor_step).bind(4, worker_id);
}

// Whether the scalar batch statement can store r (its constants are r's values).
bool is_plain_scalar(const ValueRow& r) {
  const PreparedValue& v = *r.value;
  return r.inline_blob && v.red_src == 2 && v.shape_text == "[1]";
}

// Binds row i's parameters of the scalar batch statement.
void bind_scalar_row(Statement& ins, size_t i, const ValueRow& r) {
  const PreparedValue& v = *r.value;
  const int base = kSharedParams + static_cast<int>(i) * kScalarRowParams;
  ins.bind(base + 1, r.tensor_id).bind(base + 2, static_cast<int64_t>(v.dtype));
  if (!std::isnan(v.red[kRedMin])) ins.bind(base + 3, v.red[kRedMin]);
  const std::string_view blob = v.blob.bytes();
  ins.bind_blob_static(base + 4, blob.data(), blob.size());
}

// Binds row i's parameters of an INSERT INTO value.
void bind_value_row(Statement& ins, size_t i, const ValueRow& r) {
  const PreparedValue& v = *r.value;
  const int base = kSharedParams + static_cast<int>(i) * kRowParams;
  ins.bind(base + 1, r.tensor_id);
  if (v.has_raw) ins.bind(base + 2, static_cast<int64_t>(v.dtype));   // dtype_name.code
  if (v.has_raw || v.has_shape) ins.bind_text_static(base + 3, v.shape_text);
  ins.bind(base + 4, v.red_src).bind(base + 5, v.red_src == 2 ? int64_t{0} : static_cast<int64_t>(v.red_mask));
  // Unbound parameters are NULL (reset() clears bindings): bind only what is present.
  for (int k = 0; k < kAllReductions; ++k) {
    bool present = v.red_src == 1 ? (v.red_mask >> k) & 1 : (v.red_src == 2 && k == kRedMin);
    if (present && !std::isnan(v.red[k])) ins.bind(base + 6 + k, v.red[k]);
  }
  if (r.inline_blob) ins.bind_blob_static(base + 24, v.blob.bytes().data(), v.blob.bytes().size());
  if (r.apart()) ins.bind(base + 25, r.value_id);
}
}  // namespace

// Inserts value rows, then their apart blobs.
//
// Fast path (nothing of this step and worker is stored yet, so no row can collide): INSERT OR
// IGNORE, 32 rows per statement (plain scalars through their own statement: 4 parameters a row
// instead of 25). OR IGNORE because a statement that may abort half-way needs a statement
// journal, which cost more than the batching saved; the row count is checked instead.
// Otherwise row by row, so a value stored before is reported and skipped on its own.
void Ingester::write_values(PreparedFile& f, int64_t wid, int64_t tensor_step, std::vector<ValueRow>& rows,
                            bool fast, bool scalars, IngestStats* stats) {
  FileStatements& st = file_statements();
  if (fast) {
    auto insert = [&](Statement& ins, auto bind_row, size_t from, size_t n) {
      bind_shared(ins, trial_id_, tensor_step, f.step, wid);
      for (size_t i = 0; i < n; ++i) bind_row(ins, i, rows[from + i]);
      ins.step();
      ins.reset();
      if (static_cast<size_t>(sqlite3_changes(db_.handle())) != n)
        throw Error(Status::database("values of step " + std::to_string(f.step) + " for worker " + f.worker +
                                     " collided with stored values although none were recorded for it (" + f.path + ")")
                        .at(db_.path()));
    };
    if (rows.size() == kValueBatch && scalars) insert(st.insert_scalar_batch, bind_scalar_row, 0, kValueBatch);
    else if (rows.size() == kValueBatch) insert(st.insert_value_batch, bind_value_row, 0, kValueBatch);
    else
      for (size_t i = 0; i < rows.size(); ++i) insert(st.insert_value_fast, bind_value_row, i, 1);
  }
  for (ValueRow& r : rows) {
    if (!fast) {
      Statement& ins = st.insert_value;
      bind_shared(ins, trial_id_, tensor_step, f.step, wid);
      bind_value_row(ins, 0, r);
      try {
        ins.step();
      } catch (const Error& e) {
        ins.reset();
        record_error({f.path, f.step, "tensor '" + r.value->tensor + "' for worker " + f.worker +
                                          " was already stored: " + e.status().cause()},
                     stats);
        continue;
      }
      ins.reset();
    }
    ++stats->values;
    if (!r.apart()) continue;
    const std::string_view blob = r.value->blob.bytes();
    st.insert_blob.bind(1, r.value_id).bind_blob_static(2, blob.data(), blob.size()).run();
    pool_.give(std::move(r.value->blob.owned));   // release the tensor as soon as it is stored
  }
  rows.clear();
}

void Ingester::write_file(PreparedFile& f, IngestStats* stats, std::map<int64_t, int>* touched) {
  FileStatements& st = file_statements();
  {
    // Another process may have ingested it meanwhile.
    st.is_ingested.bind(1, trial_id_).bind(2, f.path);
    bool done = st.is_ingested.step();
    st.is_ingested.reset();
    if (done) {
      ingested_.insert(f.path);
      return;
    }
  }
  if (!f.index_valid) {   // unusable index (ended trial): report it, never look at it again
    for (const auto& e : f.errors) record_error(e, stats);
    mark_ingested(f.path);
    return;
  }
  int64_t wid = worker_id(f.worker);
  int64_t tensor_step = f.mode == Mode::kGlobal ? f.mode_step : f.step;
  st.insert_step.bind(1, trial_id_).bind(2, f.step).bind(3, std::string_view(mode_name(f.mode))).bind(4, f.mode_step)
      .bind(5, tensor_step).run();
  if (sqlite3_changes(db_.handle()) == 0) {   // another worker wrote the step first: its numbering holds
    st.step_mode.bind(1, trial_id_).bind(2, f.step);
    if (st.step_mode.step()) tensor_step = st.step_mode.int64(2);
    st.step_mode.reset();
  }
  // value_blob ids are allocated here (value has no rowid): this transaction holds the write
  // lock, so nobody else allocates until it commits.
  int64_t next_value_id = 0;
  if (st.max_value_id.step()) next_value_id = st.max_value_id.int64(0) + 1;
  st.max_value_id.reset();
  // Values of this (step, worker) exist only if its step_worker row does (same transaction).
  st.has_step_worker.bind(1, trial_id_).bind(2, f.step).bind(3, wid);
  const bool fast = !st.has_step_worker.step();
  st.has_step_worker.reset();
  std::vector<ValueRow> batch, scalar_batch;
  batch.reserve(kValueBatch);
  scalar_batch.reserve(kValueBatch);
  for (auto& v : f.values) {
    if (!v.has_raw && !v.has_shape && !v.red_mask) continue;
    // Small values live in the value row itself: one B-tree insert fewer per scalar.
    ValueRow r{&v, tensor_id(v.tensor), 0,
               v.has_raw && !v.raw_too_large && !opt_.compress && v.blob.bytes().size() <= kInlineBlobBytes};
    if (r.apart()) r.value_id = next_value_id++;
    if (fast && is_plain_scalar(r)) {
      scalar_batch.push_back(r);
      if (scalar_batch.size() == kValueBatch) write_values(f, wid, tensor_step, scalar_batch, fast, true, stats);
    } else {
      batch.push_back(r);
      if (batch.size() == kValueBatch) write_values(f, wid, tensor_step, batch, fast, false, stats);
    }
  }
  write_values(f, wid, tensor_step, scalar_batch, fast, true, stats);   // a short batch goes row by row
  write_values(f, wid, tensor_step, batch, fast, false, stats);
  for (const auto& e : f.errors) record_error(e, stats);
  st.insert_step_worker.bind(1, trial_id_).bind(2, f.step).bind(3, wid).run();
  mark_ingested(f.path);
  (*touched)[f.step] = 1;
  ++stats->files_ingested;
}

// A step is complete when every expected worker wrote it, when a later step is complete, or when
// training has ended (FORMAT.md). Complete steps are therefore a prefix, kept as the trial's
// complete_through; step.complete mirrors it, including for a step first seen below the mark.
// Only steps touched in this transaction can raise the mark.
int64_t Ingester::complete_steps(const std::map<int64_t, int>& touched, bool ended) {
  int64_t through = -1;
  {
    Statement q(db_.handle(), "SELECT complete_through FROM trial WHERE trial_id = ?");
    if (q.bind(1, trial_id_).step()) through = q.int64(0);
  }
  const int64_t before = through;
  if (ended) {
    through = std::numeric_limits<int64_t>::max();
  } else {
    int expected = expected_workers_ > 0 ? expected_workers_ : static_cast<int>(std::max<size_t>(1, workers_.size()));
    Statement c(db_.handle(), "SELECT count(*) FROM step_worker WHERE trial_id = ? AND step = ?");
    for (auto it = touched.rbegin(); it != touched.rend() && it->first > through; ++it) {
      c.bind(1, trial_id_).bind(2, it->first);
      c.step();
      bool full = c.int64(0) >= expected;
      c.reset();
      if (full) {
        through = it->first;
        break;
      }
    }
  }
  if (through > before) {
    Statement u(db_.handle(), "UPDATE trial SET complete_through = ? WHERE trial_id = ?");
    u.bind(1, through).bind(2, trial_id_).run();
  }
  if (through < 0) return 0;
  // Steps newly under the mark: those above the old mark, and (defensively: listings start after
  // the files of complete steps, so this should not occur) a touched step below it seen late.
  const double now = now_unix();
  int64_t completed = 0;
  Statement u(db_.handle(),
              "UPDATE step SET complete = 1, completed_at = ?1 "
              "WHERE trial_id = ?2 AND step > ?3 AND step <= ?4 AND complete = 0");
  u.bind(1, now).bind(2, trial_id_).bind(3, before).bind(4, through).run();
  completed += sqlite3_changes(db_.handle());
  Statement late(db_.handle(),
                 "UPDATE step SET complete = 1, completed_at = ?1 WHERE trial_id = ?2 AND step = ?3 AND complete = 0");
  for (const auto& [step, unused] : touched) {
    if (step > before) break;
    late.bind(1, now).bind(2, trial_id_).bind(3, step).run();
    completed += sqlite3_changes(db_.handle());
  }
  return completed;
}

IngestStats Ingester::run_once() {
  struct ClearPool {   // first in, last out: after every worker of the pass is done
    BufferPool& pool;
    ~ClearPool() { pool.clear(); }
  } clear_pool{pool_};
  IngestStats stats;
  // The end marker is checked before listing: everything listed after it is final.
  const bool ended = source_.exists("training_job_end.ts");
  stats.ended = ended;
  load_collections(ended, &stats);
  waiting_.clear();   // another process may have ingested some meanwhile
  {
    Statement w(db_.handle(), "SELECT path FROM waiting_file WHERE trial_id = ?");
    w.bind(1, trial_id_);
    while (w.step()) waiting_.insert(w.text(0));
  }
  if (opt_.strict && !stats.errors.empty()) throw Error(strict_stop(stats.errors.front()));

  struct Pending {
    std::string path;
    int64_t step;
    std::string worker;
  };
  std::vector<Pending> pending;
  {
    std::vector<IngestIssue> bad_names;
    for (auto& f : source_.list("index/", list_start_after())) {
      if (ingested_.count(f.path)) continue;
      int64_t step;
      std::string worker;
      if (!parse_index_path(f.path, &step, &worker)) {
        if (f.path.size() > 5 && f.path.compare(f.path.size() - 5, 5, ".json") == 0)
          bad_names.push_back({f.path, -1, "index file name is not <12-digit step>_<worker>.json"});
        continue;
      }
      pending.push_back({f.path, step, worker});
    }
    if (!bad_names.empty()) {
      Transaction tx(db_);
      for (const auto& e : bad_names) record_error(e, &stats);
      tx.commit();
      if (opt_.strict) throw Error(strict_stop(bad_names.front()));
    }
  }
  std::sort(pending.begin(), pending.end(),
            [](const Pending& a, const Pending& b) { return a.step != b.step ? a.step < b.step : a.worker < b.worker; });

  const uint64_t max_blob = static_cast<uint64_t>(sqlite3_limit(db_.handle(), SQLITE_LIMIT_LENGTH, -1));
  const int threads = opt_.threads > 0 ? opt_.threads : std::max(1u, std::thread::hardware_concurrency());
  const size_t window = static_cast<size_t>(threads) * 2;
  ReadBudget budget(kReadAheadBytes);
  std::vector<std::future<PreparedFile>> futures(pending.size());
  size_t submitted = 0;
  auto submit_until = [&](size_t limit) {
    for (; submitted < pending.size() && submitted < limit; ++submitted) {
      const Pending& p = pending[submitted];
      futures[submitted] = std::async(std::launch::async, [this, p, ended, threads, max_blob, &budget, t = submitted] {
        return prepare_file(source_, p.path, p.step, p.worker, ended, opt_.compress, threads, max_blob, &budget,
                            &pool_, t);
      });
    }
  };

  // While there is something to write: a rollback journal if asked for and nobody else has the
  // database open, else the WAL with checkpoints beside the writer. Both are declared before tx:
  // a transaction left open by an exception is rolled back before they end.
  std::unique_ptr<BulkLoad> bulk;
  std::unique_ptr<WalCheckpointer> checkpointer;
  if (!pending.empty() && opt_.bulk_load) bulk = std::make_unique<BulkLoad>(db_);
  if (!pending.empty() && !(bulk && bulk->active())) checkpointer = std::make_unique<WalCheckpointer>(db_);
  std::unique_ptr<Transaction> tx;
  std::map<int64_t, int> touched;
  size_t tx_bytes = 0, tx_files = 0;
  auto commit = [&] {
    if (!tx) return;
    int64_t completed = complete_steps(touched, false);
    tx->commit();
    tx.reset();
    if (checkpointer) checkpointer->after_commit();
    touched.clear();
    tx_bytes = tx_files = 0;
    stats.steps_completed += completed;
    if (completed > 0 && opt_.on_steps_completed) opt_.on_steps_completed(completed);
  };
  try {
    for (size_t i = 0; i < pending.size(); ++i) {
      submit_until(i + window);
      PreparedFile f = futures[i].get();
      struct Release {
        ReadBudget& budget;
        uint64_t bytes;
        ~Release() { budget.release(bytes); }
      } release{budget, f.reserved};
      stats.bytes_read += f.bytes;
      if (f.status == FileStatus::kWait) {
        ++stats.files_waiting;
        if (!waiting_.count(f.path)) {
          if (!tx) tx = std::make_unique<Transaction>(db_);
          mark_waiting(f.path);
        }
      } else {
        if (f.index_valid) check_step_mode(f);
        if (opt_.strict && !f.errors.empty()) {
          commit();
          Transaction etx(db_);
          record_error(f.errors.front(), &stats);
          etx.commit();
          throw Error(strict_stop(f.errors.front()));
        }
        if (!tx) tx = std::make_unique<Transaction>(db_);
        write_file(f, &stats, &touched);
        if (f.mapped_span && f.mapped_span->shrank())   // the open transaction is rolled back
          throw Error(Status::io("the file shrank while its tensors were being stored (truncated by another "
                                 "process?); nothing of it was stored. Run the ingest again.")
                          .at(source_.root() + "/" + f.mapped_file));
        if (f.span) pool_.give(std::move(*f.span));   // its blobs are stored
        tx_bytes += f.bytes;
        ++tx_files;
        // At the usual size, unless a bulk load still in effect waits for its own larger one
        // (in_effect is a query: asked only once the usual size is reached).
        const bool usual_size = tx_bytes >= kCommitBytes || tx_files >= kCommitFiles;
        const bool bulk_size = tx_bytes >= kBulkCommitBytes || tx_files >= kBulkCommitFiles;
        if (usual_size && (bulk_size || !bulk || !bulk->in_effect())) commit();
      }
      if (opt_.progress) opt_.progress(i + 1, pending.size());
    }
    commit();
  } catch (...) {
    budget.abort();
    for (size_t j = 0; j < submitted; ++j)
      if (futures[j].valid()) futures[j].wait();
    throw;
  }
  if (ended) {
    Transaction etx(db_);
    Statement u(db_.handle(), "UPDATE trial SET ended = 1 WHERE trial_id = ?");
    u.bind(1, trial_id_).run();
    int64_t completed = complete_steps({}, true);
    etx.commit();
    stats.steps_completed += completed;
    if (completed > 0 && opt_.on_steps_completed) opt_.on_steps_completed(completed);
  }
  return stats;
}

}  // namespace trialdb
