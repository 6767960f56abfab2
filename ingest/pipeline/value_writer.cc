#include "ingest/pipeline/value_writer.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <string>
#include <tuple>

#include "schema/multi_row.h"
#include "schema/tensor_summary.h"

namespace trialdb {

// A value row waiting in the buffer: everything its INSERT binds, owned.
struct ValueWriter::BufferedValue {
  int64_t tensor_id, tensor_step, step_offset, worker_id;  // the key
  int64_t dtype;                                           // has_raw
  int64_t value_id;                                        // apart
  int64_t file_id, rec_offset, rec_length;                 // has_raw: the record's location
  int64_t distribution_id;                                 // 0: it has no value_distribution row
  double red[kAllReductions];
  size_t shape_at, shape_size;  // in bytes_, when has_shape_text
  size_t data_at, data_size;    // in bytes_, when inline_blob
  uint32_t file;                // in files_
  uint32_t red_mask, red_computed;
  ReductionSource red_src;
  bool has_raw, has_shape_text;
  bool inline_blob;   // the blob goes into value.data
  bool apart;         // the blob is in value_blob
  bool plain_scalar;  // the scalar statement can store it (its literals are this row's values)
};

// A plain scalar's row waiting in the buffer: what the scalar statement binds, a third of a
// BufferedValue's bytes, so that the buffer holds three times as many scalars.
struct ValueWriter::BufferedScalar {
  int64_t tensor_id, tensor_step, step_offset, worker_id;  // the key
  int64_t dtype;
  double element;
  int64_t file_id, rec_offset, rec_length;
  size_t data_at;  // the inline blob, in bytes_
  uint32_t data_size;
  uint32_t file;  // in files_
};

namespace {

// key_order counts rows by tensor when the buffer's tensor ids span at most this many per row.
constexpr uint64_t kCountingSortSpan = 4;

// Parameter ?1 of an INSERT INTO value, which every row shares: the trial.
constexpr int kTrialIdParam = 1;
constexpr int kSharedParams = 1;

// The first parameters of a value row and of a plain scalar's: the key (tensor, step, offset,
// worker), bound by bind_key.
enum KeyParam : int {
  kTensorIdParam = 1,
  kTensorStepParam,
  kStepOffsetParam,
  kWorkerIdParam,
  kKeyParams = kWorkerIdParam
};

// A row's parameters, numbered from 1 after the shared one (row i starts at
// kSharedParams + i * kRowParams), in the column order of kValueColumns: the table's own. SQLite
// then builds each row of a multi-row INSERT in the registers it stores from; in another order it
// copies every column of every row there first.
enum RowParam : int {
  kValueIdParam = kKeyParams + 1,
  kDtypeParam,
  kShapeParam,
  kRedSrcParam,
  kRedMaskParam,
  kRedComputedParam,
  kFirstReductionParam,  // kAllReductions of them, in ReductionIndex order, plain then |x|
  kDataParam = kFirstReductionParam + kAllReductions,
  kFileIdParam,  // the record's location (value_locations), NULL without a raw value
  kRecOffsetParam,
  kRecLengthParam,
  kDistributionIdParam,  // its value_distribution row, NULL without one
  kRowParams = kDistributionIdParam,
};
constexpr const char* kValueColumns =
    "trial_id, tensor_id, tensor_step, step_offset, worker_id, value_id, dtype, shape, red_src, red_mask, "
    "red_computed, r_min, r_max, r_mean, r_prod, r_std, r_variance, r_sum, r_l1, r_l2, "
    "ra_min, ra_max, ra_mean, ra_prod, ra_std, ra_variance, ra_sum, ra_l1, ra_l2, data, file_id, rec_offset, "
    "rec_length, distribution_id";

// A plain scalar's parameters: shape, red_src, red_mask and red_computed (all 18) are literals, the
// rest NULL.
enum ScalarParam : int {
  kScalarDtypeParam = kKeyParams + 1,
  kScalarElementParam,
  kScalarDataParam,
  kScalarFileIdParam,
  kScalarRecOffsetParam,
  kScalarRecLengthParam,
  kScalarRowParams = kScalarRecLengthParam
};
constexpr const char* kScalarColumns =
    "trial_id, tensor_id, tensor_step, step_offset, worker_id, dtype, shape, red_src, red_mask, red_computed, r_min, "
    "data, file_id, rec_offset, rec_length";

// A value_distribution row's parameters, numbered from 1 (row i of a multi-row INSERT starts at
// i * kDistributionParams), in the order of kDistributionColumns. Its id is SQLite's choice, as a
// blob row's is (kBlobRowParams).
enum DistributionParam : int {
  kNanParam = 1,
  kPosInfParam,
  kNegInfParam,
  kZeroParam,
  kNegativeParam,
  kPositiveParam,
  kFirstPercentileParam,  // kDistributionPercentiles of them, in kDistributionPercents order
  kDistributionParams = kFirstPercentileParam + kDistributionPercentiles - 1
};
constexpr const char* kDistributionColumns =
    "nan, pos_inf, neg_inf, zero, negative, positive, p0, p1, p5, p10, p25, p50, p75, p90, p95, p99, p100";
static_assert(kDistributionParams == 17);

// A value_histogram row's parameters: its distribution's id, then its blob. Explicit, since a
// distribution without finite elements has no histogram.
enum HistogramParam : int { kHistogramIdParam = 1, kHistogramBlobParam, kHistogramParams = kHistogramBlobParam };

// A value_blob row's one parameter: its blob. Its id is SQLite's choice (the largest plus one), which finds the end of
// the table without the search an explicit id costs.
constexpr int kBlobRowParams = 1;

// A row of a multi-row INSERT INTO value: "(?1,?,?,...)", the shared trial then the row's own
// parameters (row i's are kSharedParams + i * kRowParams + 1 on). A plain ? is numbered one after
// the parameter before it, so every row's SQL is the same and the numbers need not be written:
// SQLite looks every ?N up in a list of the statement's numbered parameters while it codes the
// statement, quadratic in the thousand parameters of a full one (schema/multi_row.h).
std::string value_row_sql() {
  std::string r = "(?";
  r += std::to_string(kTrialIdParam);
  for (int k = kTensorIdParam; k <= kRowParams; ++k) r += ",?";
  r += ')';
  return r;
}

// The same for a plain scalar: its literal columns between its parameters.
std::string scalar_row_sql() {
  std::string r = "(?";
  r += std::to_string(kTrialIdParam);
  for (int k = kTensorIdParam; k <= kScalarDtypeParam; ++k) r += ",?";
  r += ",'[1]',";
  r += std::to_string(static_cast<int>(ReductionSource::kScalarElement));
  r += ",0,";
  r += std::to_string(kAllReductionsMask);
  for (int k = kScalarElementParam; k <= kScalarRowParams; ++k) r += ",?";
  r += ')';
  return r;
}

std::string insert_sql(const char* verb, const char* columns, const std::string& rows) {
  return std::string(verb) + " INTO value(" + columns + ") VALUES " + rows;
}

// "INSERT INTO table(columns) VALUES (?1,...,?k),(?k+1,...),..." for n rows of k parameters.
std::string multi_row_insert_sql(const char* table, const char* columns, int params, size_t n) {
  return std::string("INSERT INTO ") + table + "(" + columns + ") VALUES " + values_rows_sql(n, params);
}

// Rows in their table's key order (tensor, step, offset, worker), as indices. Rows come file by
// file, a (step, worker) at a time in step order, so a stable grouping by tensor (a counting sort)
// leaves each tensor's rows in order but where files came otherwise (GLOBAL-mode steps, numbered
// by their mode step; a worker's late file): those tensors' rows are sorted. A comparison sort of
// all rows cost ~1,000 instructions a row, 4% of the ingest of many scalars.
template <typename Row>
std::vector<uint32_t> key_order(const std::vector<Row>& rows) {
  std::vector<uint32_t> order(rows.size());
  if (rows.empty()) return order;
  auto within_tensor = [&](uint32_t a, uint32_t b) {
    const Row &x = rows[a], &y = rows[b];
    if (x.tensor_step != y.tensor_step) return x.tensor_step < y.tensor_step;
    if (x.step_offset != y.step_offset) return x.step_offset < y.step_offset;
    return x.worker_id < y.worker_id;
  };
  const auto [lo, hi] = std::minmax_element(rows.begin(), rows.end(),
                                            [](const Row& a, const Row& b) { return a.tensor_id < b.tensor_id; });
  const uint64_t tensors = static_cast<uint64_t>(hi->tensor_id - lo->tensor_id) + 1;
  if (tensors > kCountingSortSpan * rows.size()) {  // ids too sparse to count by
    for (size_t i = 0; i < rows.size(); ++i) order[i] = static_cast<uint32_t>(i);
    std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
      return rows[a].tensor_id != rows[b].tensor_id ? rows[a].tensor_id < rows[b].tensor_id : within_tensor(a, b);
    });
    return order;
  }
  // end[t]: first the start of tensor t's rows, then, once they are placed, their end.
  std::vector<uint32_t> end(tensors + 1, 0);
  for (const Row& r : rows) ++end[r.tensor_id - lo->tensor_id + 1];
  for (size_t t = 1; t <= tensors; ++t) end[t] += end[t - 1];
  for (size_t i = 0; i < rows.size(); ++i) order[end[rows[i].tensor_id - lo->tensor_id]++] = static_cast<uint32_t>(i);
  for (size_t t = 0, from = 0; t < tensors; from = end[t++]) {
    const auto first = order.begin() + static_cast<ptrdiff_t>(from), last = order.begin() + end[t];
    if (!std::is_sorted(first, last, within_tensor)) std::sort(first, last, within_tensor);
  }
  return order;
}

// The row's key, its parameters from base + 1.
template <typename Row>
Statement& bind_key(Statement& ins, int base, const Row& r) {
  return ins.bind(base + kTensorIdParam, r.tensor_id)
      .bind(base + kTensorStepParam, r.tensor_step)
      .bind(base + kStepOffsetParam, r.step_offset)
      .bind(base + kWorkerIdParam, r.worker_id);
}

// Unbound parameters are NULL (reset() clears bindings): only what is present is bound. SQLite
// stores NaN as NULL, so a present NaN reduction is left unbound too.
template <typename Row>
void bind_value_row(Statement& ins, size_t i, const Row& r, const std::string& bytes) {
  const int base = kSharedParams + static_cast<int>(i) * kRowParams;
  bind_key(ins, base, r);
  if (r.has_raw) ins.bind(base + kDtypeParam, r.dtype);  // dtype_name.code
  if (r.has_shape_text)
    ins.bind_text_static(base + kShapeParam, std::string_view(bytes).substr(r.shape_at, r.shape_size));
  const bool scalar = r.red_src == ReductionSource::kScalarElement;
  ins.bind(base + kRedSrcParam, static_cast<int64_t>(r.red_src))
      .bind(base + kRedMaskParam, scalar ? int64_t{0} : static_cast<int64_t>(r.red_mask))
      .bind(base + kRedComputedParam, static_cast<int64_t>(r.red_computed));
  for (int k = 0; k < kAllReductions; ++k) {
    const bool present = r.red_src == ReductionSource::kColumns ? (r.red_mask >> k) & 1 : (scalar && k == kRedMin);
    if (present && !std::isnan(r.red[k])) ins.bind(base + kFirstReductionParam + k, r.red[k]);
  }
  if (r.inline_blob) ins.bind_blob_static(base + kDataParam, bytes.data() + r.data_at, r.data_size);
  if (r.apart) ins.bind(base + kValueIdParam, r.value_id);
  if (r.has_raw)
    ins.bind(base + kFileIdParam, r.file_id)
        .bind(base + kRecOffsetParam, r.rec_offset)
        .bind(base + kRecLengthParam, r.rec_length);
  if (r.distribution_id) ins.bind(base + kDistributionIdParam, r.distribution_id);
}

template <typename Row>
void bind_scalar_row(Statement& ins, size_t i, const Row& r, const std::string& bytes) {
  const int base = kSharedParams + static_cast<int>(i) * kScalarRowParams;
  bind_key(ins, base, r).bind(base + kScalarDtypeParam, r.dtype);
  if (!std::isnan(r.element)) ins.bind(base + kScalarElementParam, r.element);
  ins.bind_blob_static(base + kScalarDataParam, bytes.data() + r.data_at, r.data_size)
      .bind(base + kScalarFileIdParam, r.file_id)
      .bind(base + kScalarRecOffsetParam, r.rec_offset)
      .bind(base + kScalarRecLengthParam, r.rec_length);
}

void bind_distribution_row(Statement& ins, size_t i, const Distribution& d) {
  const int base = static_cast<int>(i) * kDistributionParams;
  ins.bind(base + kNanParam, d.nan)
      .bind(base + kPosInfParam, d.pos_inf)
      .bind(base + kNegInfParam, d.neg_inf)
      .bind(base + kZeroParam, d.zero)
      .bind(base + kNegativeParam, d.negative)
      .bind(base + kPositiveParam, d.positive);
  for (int p = 0; p < kDistributionPercentiles; ++p)  // NaN stays unbound: NULL
    if (!std::isnan(d.percentile[p])) ins.bind(base + kFirstPercentileParam + p, d.percentile[p]);
}

}  // namespace

ValueWriter::ValueWriter(Database& db, int64_t trial_id, bool compress, TensorSummaryWriter& summary,
                         ValueBufferLimits limits)
    : db_(db),
      trial_id_(trial_id),
      compress_(compress),
      summary_(summary),
      limits_(limits),
      insert_value_(db.handle(), insert_sql("INSERT", kValueColumns, value_row_sql())),
      step_workers_(db.handle(), R"sql(
        SELECT coalesce(max(worker_id = ?3), 0), coalesce(max(worker_id <> ?3), 0)
        FROM step_worker
        WHERE trial_id = ?1 AND step = ?2)sql"),
      values_stored_(db.handle(), R"sql(
        SELECT 1 FROM value INDEXED BY value_by_step
        WHERE trial_id = ?1 AND tensor_step = ?2 AND step_offset = ?3 AND worker_id = ?4 LIMIT 1)sql"),
      max_value_id_(db.handle(), "SELECT coalesce(max(value_id), 0) FROM value_blob"),
      max_distribution_id_(db.handle(), "SELECT coalesce(max(distribution_id), 0) FROM value_distribution"),
      insert_event_file_(db.handle(), "INSERT INTO event_file(trial_id, path) VALUES (?, ?) ON CONFLICT DO NOTHING"),
      find_event_file_(db.handle(), "SELECT file_id FROM event_file WHERE trial_id = ? AND path = ?"),
      step_index_(db, "value", "value_by_step") {}

ValueWriter::~ValueWriter() = default;

int64_t ValueWriter::event_file_id(const std::string& path) {
  if (auto it = event_files_.find(path); it != event_files_.end()) return it->second;
  insert_event_file_.bind(1, trial_id_).bind_text_static(2, path).run();
  find_event_file_.bind(1, trial_id_).bind_text_static(2, path);
  if (!find_event_file_.step()) throw Error(Status::database("event file " + path + " not recorded").at(db_.path()));
  const int64_t id = find_event_file_.int64(0);
  find_event_file_.reset();
  return event_files_.emplace(path, id).first->second;
}

uint32_t ValueWriter::current_file(const PreparedFile& f) {
  if (!file_listed_) files_.push_back({f.file.path, f.file.worker, f.file.step});
  file_listed_ = true;
  return static_cast<uint32_t>(files_.size() - 1);
}

bool ValueWriter::buffer_full() const {
  const size_t rows = values_.size() + scalars_.size();
  const size_t bytes =
      values_.size() * sizeof(BufferedValue) + scalars_.size() * sizeof(BufferedScalar) + bytes_.size();
  return rows >= limits_.rows || bytes >= limits_.bytes;
}

ValueWriter::BufferedValue ValueWriter::buffered(const PreparedValue& v, int64_t tensor_id, int64_t tensor_step,
                                                 int64_t step, int64_t worker_id, int64_t file_id, uint32_t file) {
  BufferedValue r{};
  r.tensor_id = tensor_id, r.tensor_step = tensor_step, r.step_offset = step - tensor_step, r.worker_id = worker_id;
  r.file = file;
  r.has_raw = v.has_raw;
  r.dtype = static_cast<int64_t>(v.dtype);
  if (v.has_raw) {
    r.file_id = file_id;
    r.rec_offset = static_cast<int64_t>(v.record_offset);
    r.rec_length = static_cast<int64_t>(v.record_length);
  }
  r.red_src = v.red_src, r.red_mask = v.red_mask, r.red_computed = v.red_computed;
  std::copy(std::begin(v.red), std::end(v.red), std::begin(r.red));
  // Small values live in the value row itself: one B-tree insert fewer per scalar.
  r.inline_blob = v.has_raw && !v.raw_too_large && (!compress_ || blob_bytes_not_stored(v.blob.bytes())) &&
                  v.blob.bytes().size() <= kInlineBlobBytes;
  r.apart = v.has_raw && !v.raw_too_large && !r.inline_blob;
  r.plain_scalar = r.inline_blob && v.red_src == ReductionSource::kScalarElement && v.shape_text == "[1]" &&
                   v.red_computed == kAllReductionsMask;
  r.has_shape_text = v.has_raw || v.has_shape;
  if (r.has_shape_text) {
    r.shape_at = bytes_.size(), r.shape_size = v.shape_text.size();
    bytes_ += v.shape_text;
  }
  if (r.inline_blob) {
    const std::string_view blob = v.blob.bytes();
    r.data_at = bytes_.size(), r.data_size = blob.size();
    bytes_ += blob;
  }
  return r;
}

void ValueWriter::check_nothing_stored(const PreparedFile& f, int64_t worker_id, int64_t tensor_step) {
  values_stored_.bind(1, trial_id_).bind(2, tensor_step).bind(3, f.file.step - tensor_step).bind(4, worker_id);
  const bool stored = values_stored_.step();
  values_stored_.reset();
  if (stored)
    throw Error(Status::database("values of step " + std::to_string(f.file.step) + " for worker " + f.file.worker +
                                 " are stored although none were recorded for it (" + f.file.path + ")")
                    .at(db_.path()));
}

size_t ValueWriter::write(PreparedFile& f, int64_t worker_id, int64_t tensor_step,
                          const std::function<int64_t(const std::string&)>& tensor_id,
                          const std::function<void(const Status&)>& report) {
  distributions_.clear();  // none left by a write that threw: its transaction is rolled back
  histograms_.clear();
  blobs_.clear();
  file_listed_ = false;
  // value_blob ids are allocated here (value has no rowid), as SQLite allocates them (the largest
  // plus one): the caller's transaction holds the write lock, so nobody else allocates until it
  // commits.
  int64_t next_value_id = 1;
  if (max_value_id_.step()) next_value_id = max_value_id_.int64(0) + 1;
  max_value_id_.reset();
  // value_distribution ids likewise (value_histogram rows take their distribution's).
  int64_t next_distribution_id = 1;
  if (max_distribution_id_.step()) next_distribution_id = max_distribution_id_.int64(0) + 1;
  max_distribution_id_.reset();
  // Values of a (step, worker) exist only if its step_worker row does (same transaction).
  step_workers_.bind(1, trial_id_).bind(2, f.file.step).bind(3, worker_id);
  step_workers_.step();
  const StepWorkers before{step_workers_.int64(0) != 0, step_workers_.int64(1) != 0};
  step_workers_.reset();
  const bool fast = !before.this_worker;
  summary_.begin_file(f.file.step, tensor_step, worker_id, before);
  step_index_.defer_if_empty();
  // Whatever reads the tables below sees what the buffer holds.
  if (!fast || summary_.looks_up_values()) insert_buffered();
  // Without value_by_step nothing can be stored: value was empty when the transaction began, and
  // every row since came with its step_worker row.
  if (fast && !step_index_.deferred()) check_nothing_stored(f, worker_id, tensor_step);

  size_t stored = 0;
  int64_t file_id = 0;  // f.event_file's row, found once for the file's raw values
  for (auto& v : f.values) {
    if (!v.has_raw && !v.has_shape && !v.red_mask) continue;
    if (v.has_raw && !file_id) file_id = event_file_id(f.event_file);
    const int64_t tensor = tensor_id(v.tensor);
    const bool adds_visible_step = summary_.adds_visible_step(tensor);
    BufferedValue r = buffered(v, tensor, tensor_step, f.file.step, worker_id, file_id, fast ? current_file(f) : 0);
    if (r.apart) r.value_id = next_value_id++;
    if (v.has_distribution && v.red_src != ReductionSource::kScalarElement) r.distribution_id = next_distribution_id++;
    if (fast) {
      if (r.plain_scalar)
        scalars_.push_back({r.tensor_id, r.tensor_step, r.step_offset, r.worker_id, r.dtype, r.red[kRedMin], r.file_id,
                            r.rec_offset, r.rec_length, r.data_at, static_cast<uint32_t>(r.data_size), r.file});
      else values_.push_back(r);
    } else if (!insert_one(r, f, v.tensor, report)) {
      if (r.apart) --next_value_id;  // the last ids allocated: the next value takes them, as SQLite will
      if (r.distribution_id) --next_distribution_id;
      continue;
    }
    ++stored;
    summary_.stored(tensor, v.has_raw ? r.dtype : kNoDtype,
                    v.has_raw || v.has_shape ? std::string_view(v.shape_text) : kNoShape, adds_visible_step);
    if (r.distribution_id) add_distribution(r.distribution_id, v.distribution);
    if (r.apart) {
      blobs_.push_back({r.value_id, &v.blob});
      if (blobs_.size() == kValueBatch) insert_blobs();
    }
    if (buffer_full()) insert_buffered();
  }
  insert_blobs();
  insert_distributions();
  insert_histograms();
  if (!fast) bytes_.clear();  // the rows inserted one by one
  file_listed_ = false;
  return stored;
}

bool ValueWriter::insert_one(const BufferedValue& r, const PreparedFile& f, const std::string& tensor,
                             const std::function<void(const Status&)>& report) {
  insert_value_.bind(kTrialIdParam, trial_id_);
  bind_value_row(insert_value_, 0, r, bytes_);
  try {
    insert_value_.step();
  } catch (const Error& e) {
    insert_value_.reset();
    report(Status::invalid("tensor '" + tensor + "' for worker " + f.file.worker +
                           " was already stored: " + e.status().cause())
               .at(f.file.path, f.file.step));
    return false;
  }
  insert_value_.reset();
  return true;
}

void ValueWriter::add_distribution(int64_t distribution_id, const Distribution& d) {
  distributions_.push_back({distribution_id, &d});
  if (distributions_.size() == kValueBatch) insert_distributions();
  if (d.negative + d.positive + d.zero > 0) {
    histograms_.push_back({distribution_id, &d.histogram});
    if (histograms_.size() == kValueBatch) insert_histograms();
  }
}

void ValueWriter::insert_distributions() {
  if (distributions_.empty()) return;
  const size_t n = distributions_.size();
  Statement& ins = cached(insert_distributions_, n, [](size_t k) {
    return multi_row_insert_sql("value_distribution", kDistributionColumns, kDistributionParams, k);
  });
  for (size_t i = 0; i < n; ++i) bind_distribution_row(ins, i, *distributions_[i].distribution);
  ins.run();
  expect_last_id("value_distribution", distributions_.back().distribution_id);
  distributions_.clear();
}

void ValueWriter::insert_blobs() {
  if (blobs_.empty()) return;
  const size_t n = blobs_.size();
  Statement& ins =
      cached(insert_blobs_, n, [](size_t k) { return multi_row_insert_sql("value_blob", "data", kBlobRowParams, k); });
  for (size_t i = 0; i < n; ++i) {
    const std::string_view bytes = blobs_[i].blob->bytes();
    ins.bind_blob_static(static_cast<int>(i) * kBlobRowParams + 1, bytes.data(), bytes.size());
  }
  ins.run();
  expect_last_id("value_blob", blobs_.back().value_id);
  for (const PendingBlob& b : blobs_) std::string().swap(b.blob->owned);  // release the tensors once stored
  blobs_.clear();
}

void ValueWriter::expect_last_id(const char* table, int64_t last_id) const {
  if (sqlite3_last_insert_rowid(db_.handle()) != last_id)
    throw Error(Status::database(std::string(table) + " ids out of step with their value rows").at(db_.path()));
}

Statement& ValueWriter::cached(std::vector<std::unique_ptr<Statement>>& cache, size_t n,
                               const std::function<std::string(size_t)>& sql) {
  if (cache.size() < n) cache.resize(n);
  if (!cache[n - 1]) cache[n - 1] = std::make_unique<Statement>(db_.handle(), sql(n));
  return *cache[n - 1];
}

void ValueWriter::insert_histograms() {
  if (histograms_.empty()) return;
  const size_t n = histograms_.size();
  Statement& ins = cached(insert_histograms_, n, [](size_t k) {
    return multi_row_insert_sql("value_histogram", "distribution_id, buckets", kHistogramParams, k);
  });
  for (size_t i = 0; i < n; ++i) {
    const int base = static_cast<int>(i) * kHistogramParams;
    ins.bind(base + kHistogramIdParam, histograms_[i].distribution_id)
        .bind_blob_static(base + kHistogramBlobParam, histograms_[i].buckets->data(), histograms_[i].buckets->size());
  }
  ins.run();
  histograms_.clear();
}

void ValueWriter::flush() {
  insert_buffered();
  step_index_.build();
}

void ValueWriter::insert_buffered() {
  flush_values();
  bytes_.clear();
  files_.clear();
  file_listed_ = false;
}

void ValueWriter::discard() {
  step_index_.discard();
  values_.clear();
  scalars_.clear();
  bytes_.clear();
  files_.clear();
  distributions_.clear();
  histograms_.clear();
  blobs_.clear();
  file_listed_ = false;
}

// In key order (the two buffers merged), runs of up to kValueBatch rows of one kind (plain scalars
// or not) per statement.
void ValueWriter::flush_values() {
  struct Row {
    bool scalar;
    uint32_t i;  // in scalars_ or values_
  };
  std::vector<Row> order;
  {
    const std::vector<uint32_t> values = key_order(values_), scalars = key_order(scalars_);
    auto key = [](const auto& r) { return std::make_tuple(r.tensor_id, r.tensor_step, r.step_offset, r.worker_id); };
    order.reserve(values.size() + scalars.size());
    size_t v = 0, c = 0;
    while (v < values.size() || c < scalars.size()) {
      const bool scalar =
          v == values.size() || (c < scalars.size() && key(scalars_[scalars[c]]) < key(values_[values[v]]));
      order.push_back(scalar ? Row{true, scalars[c++]} : Row{false, values[v++]});
    }
  }
  for (size_t from = 0; from < order.size();) {
    const bool scalars = order[from].scalar;
    size_t n = 1;
    while (n < kValueBatch && from + n < order.size() && order[from + n].scalar == scalars) ++n;
    Statement& ins =
        scalars
            ? cached(insert_scalars_, n,
                     [](size_t k) {
                       return insert_sql("INSERT OR IGNORE", kScalarColumns, repeated_rows_sql(scalar_row_sql(), k));
                     })
            : cached(insert_values_, n, [](size_t k) {
                return insert_sql("INSERT OR IGNORE", kValueColumns, repeated_rows_sql(value_row_sql(), k));
              });
    ins.bind(kTrialIdParam, trial_id_);
    for (size_t i = 0; i < n; ++i) {
      const Row& r = order[from + i];
      if (scalars) bind_scalar_row(ins, i, scalars_[r.i], bytes_);
      else bind_value_row(ins, i, values_[r.i], bytes_);
    }
    ins.run();
    if (static_cast<size_t>(sqlite3_changes(db_.handle())) != n) {
      // check_nothing_stored saw none of these (step, worker)s stored: name every file of the run.
      std::string files;
      std::vector<uint32_t> named;  // files_ indices, each named once
      for (size_t i = 0; i < n; ++i) {
        const Row& r = order[from + i];
        const uint32_t file = r.scalar ? scalars_[r.i].file : values_[r.i].file;
        if (std::find(named.begin(), named.end(), file) != named.end()) continue;
        named.push_back(file);
        const BufferedFile& bf = files_[file];
        files +=
            (files.empty() ? "" : ", ") + bf.path + " (step " + std::to_string(bf.step) + ", worker " + bf.worker + ")";
      }
      throw Error(Status::database("values collided with stored values although none were recorded for them: " + files)
                      .at(db_.path()));
    }
    from += n;
  }
  values_.clear();
  scalars_.clear();
}

}  // namespace trialdb
