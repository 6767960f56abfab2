#include "ingest/pipeline/value_writer.h"

#include <cmath>
#include <string>

#include "schema/tensor_summary.h"

namespace trialdb {

// A value on its way into the value table.
struct ValueWriter::Row {
  PreparedValue* value;
  int64_t tensor_id;
  int64_t value_id;        // its value_blob row, when apart
  int64_t file_id;         // its event file's event_file row (with a raw value)
  bool inline_blob;        // the blob goes into value.data
  bool adds_visible_step;  // TensorSummaryWriter::adds_visible_step, asked before it is stored
  bool apart() const { return value->has_raw && !value->raw_too_large && !inline_blob; }
  // Whether the scalar statement can store it (its literals are this row's values).
  bool plain_scalar() const {
    return inline_blob && value->red_src == ReductionSource::kScalarElement && value->shape_text == "[1]" &&
           value->red_computed == kAllReductionsMask;
  }
};

namespace {

// Parameters ?1..?4 of an INSERT INTO value: what every row of one file shares.
enum SharedParam : int {
  kTrialIdParam = 1,
  kTensorStepParam,
  kStepOffsetParam,
  kWorkerIdParam,
  kSharedParams = kWorkerIdParam
};

// A row's parameters, numbered from 1 after the shared ones (row i starts at
// kSharedParams + i * kRowParams), in the column order of kValueColumns.
enum RowParam : int {
  kTensorIdParam = 1,
  kDtypeParam,
  kShapeParam,
  kRedSrcParam,
  kRedMaskParam,
  kRedComputedParam,
  kFirstReductionParam,  // kAllReductions of them, in ReductionIndex order, plain then |x|
  kDataParam = kFirstReductionParam + kAllReductions,
  kValueIdParam,
  kFileIdParam,  // the record's location (value_locations), NULL without a raw value
  kRecOffsetParam,
  kRecLengthParam,
  kRowParams = kRecLengthParam,
};
constexpr const char* kValueColumns =
    "trial_id, tensor_id, tensor_step, step_offset, worker_id, dtype, shape, red_src, red_mask, red_computed, "
    "r_min, r_max, r_mean, r_prod, r_std, r_variance, r_sum, r_l1, r_l2, "
    "ra_min, ra_max, ra_mean, ra_prod, ra_std, ra_variance, ra_sum, ra_l1, ra_l2, data, value_id, file_id, rec_offset, "
    "rec_length";

// A plain scalar's parameters: shape, red_src, red_mask and red_computed (all 18) are literals, the
// rest NULL.
enum ScalarParam : int {
  kScalarTensorIdParam = 1,
  kScalarDtypeParam,
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
// i * kDistributionParams), in the order of kDistributionColumns.
enum DistributionParam : int {
  kDistTensorIdParam = 1,
  kDistTensorStepParam,
  kDistStepOffsetParam,
  kDistWorkerIdParam,
  kNanParam,
  kPosInfParam,
  kNegInfParam,
  kZeroParam,
  kNegativeParam,
  kPositiveParam,
  kFirstPercentileParam,  // kDistributionPercentiles of them, in kDistributionPercents order
  kHistogramIdParam = kFirstPercentileParam + kDistributionPercentiles,
  kDistributionParams = kHistogramIdParam
};
constexpr const char* kDistributionColumns =
    "tensor_id, tensor_step, step_offset, worker_id, nan, pos_inf, neg_inf, zero, negative, positive, p0, p1, p5, "
    "p10, p25, p50, p75, p90, p95, p99, p100, histogram_id";
static_assert(kDistributionParams == 22);

// A value_histogram row's parameters, likewise.
enum HistogramParam : int { kHistIdParam = 1, kHistBucketsParam, kHistogramParams = kHistBucketsParam };

// Appends "?n" to *sql. The row statements are built by appending: `"(" + std::string(...)` draws
// a false -Wrestrict from GCC 12 at -O3 (through basic_string::_M_replace, GCC bug 105329).
void append_param(std::string* sql, int n) {
  *sql += '?';
  *sql += std::to_string(n);
}

// "(?1,?5,?2,?3,?4,?6,...)" for row i of the full statement.
std::string value_row_sql(size_t i) {
  const int base = kSharedParams + static_cast<int>(i) * kRowParams;
  std::string r(1, '(');
  for (int p : std::initializer_list<int>{kTrialIdParam, base + kTensorIdParam, kTensorStepParam, kStepOffsetParam,
                                          kWorkerIdParam}) {
    append_param(&r, p);
    r += ',';
  }
  for (int k = kDtypeParam; k <= kRowParams; ++k) {
    append_param(&r, base + k);
    r += k < kRowParams ? ',' : ')';
  }
  return r;
}

std::string scalar_row_sql(size_t i) {
  const int base = kSharedParams + static_cast<int>(i) * kScalarRowParams;
  std::string r(1, '(');
  for (int p : std::initializer_list<int>{kTrialIdParam, base + kScalarTensorIdParam, kTensorStepParam,
                                          kStepOffsetParam, kWorkerIdParam, base + kScalarDtypeParam}) {
    append_param(&r, p);
    r += ',';
  }
  r += "'[1]',";
  r += std::to_string(static_cast<int>(ReductionSource::kScalarElement));
  r += ",0,";
  r += std::to_string(kAllReductionsMask);
  for (int p :
       std::initializer_list<int>{base + kScalarElementParam, base + kScalarDataParam, base + kScalarFileIdParam,
                                  base + kScalarRecOffsetParam, base + kScalarRecLengthParam}) {
    r += ',';
    append_param(&r, p);
  }
  r += ')';
  return r;
}

std::string rows_sql(std::string (*row)(size_t), size_t n) {
  std::string s = row(0);
  for (size_t i = 1; i < n; ++i) {
    s += ',';
    s += row(i);
  }
  return s;
}

std::string insert_sql(const char* verb, const char* columns, const std::string& rows) {
  return std::string(verb) + " INTO value(" + columns + ") VALUES " + rows;
}

// "INSERT INTO table(columns) VALUES (?1,...,?k),(?k+1,...),..." for n rows of k parameters.
std::string multi_row_insert_sql(const char* table, const char* columns, int params, size_t n) {
  std::string sql = std::string("INSERT INTO ") + table + "(" + columns + ") VALUES ";
  for (size_t i = 0; i < n; ++i) {
    sql += i ? ",(" : "(";
    for (int k = 1; k <= params; ++k) {
      append_param(&sql, static_cast<int>(i) * params + k);
      sql += k < params ? ',' : ')';
    }
  }
  return sql;
}

void bind_shared(Statement& ins, int64_t trial_id, int64_t tensor_step, int64_t step, int64_t worker_id) {
  ins.bind(kTrialIdParam, trial_id)
      .bind(kTensorStepParam, tensor_step)
      .bind(kStepOffsetParam, step - tensor_step)
      .bind(kWorkerIdParam, worker_id);
}

template <typename Row>
void bind_scalar_row(Statement& ins, size_t i, const Row& r) {
  const PreparedValue& v = *r.value;
  const int base = kSharedParams + static_cast<int>(i) * kScalarRowParams;
  ins.bind(base + kScalarTensorIdParam, r.tensor_id).bind(base + kScalarDtypeParam, static_cast<int64_t>(v.dtype));
  if (!std::isnan(v.red[kRedMin])) ins.bind(base + kScalarElementParam, v.red[kRedMin]);
  const std::string_view blob = v.blob.bytes();
  ins.bind_blob_static(base + kScalarDataParam, blob.data(), blob.size())
      .bind(base + kScalarFileIdParam, r.file_id)
      .bind(base + kScalarRecOffsetParam, static_cast<int64_t>(v.record_offset))
      .bind(base + kScalarRecLengthParam, static_cast<int64_t>(v.record_length));
}

// Unbound parameters are NULL (reset() clears bindings): only what is present is bound. SQLite
// stores NaN as NULL, so a present NaN reduction is left unbound too.
template <typename Row>
void bind_value_row(Statement& ins, size_t i, const Row& r) {
  const PreparedValue& v = *r.value;
  const int base = kSharedParams + static_cast<int>(i) * kRowParams;
  ins.bind(base + kTensorIdParam, r.tensor_id);
  if (v.has_raw) ins.bind(base + kDtypeParam, static_cast<int64_t>(v.dtype));  // dtype_name.code
  if (v.has_raw || v.has_shape) ins.bind_text_static(base + kShapeParam, v.shape_text);
  const bool scalar = v.red_src == ReductionSource::kScalarElement;
  ins.bind(base + kRedSrcParam, static_cast<int64_t>(v.red_src))
      .bind(base + kRedMaskParam, scalar ? int64_t{0} : static_cast<int64_t>(v.red_mask))
      .bind(base + kRedComputedParam, static_cast<int64_t>(v.red_computed));
  for (int k = 0; k < kAllReductions; ++k) {
    const bool present = v.red_src == ReductionSource::kColumns ? (v.red_mask >> k) & 1 : (scalar && k == kRedMin);
    if (present && !std::isnan(v.red[k])) ins.bind(base + kFirstReductionParam + k, v.red[k]);
  }
  if (r.inline_blob) ins.bind_blob_static(base + kDataParam, v.blob.bytes().data(), v.blob.bytes().size());
  if (r.apart()) ins.bind(base + kValueIdParam, r.value_id);
  if (v.has_raw)
    ins.bind(base + kFileIdParam, r.file_id)
        .bind(base + kRecOffsetParam, static_cast<int64_t>(v.record_offset))
        .bind(base + kRecLengthParam, static_cast<int64_t>(v.record_length));
}

}  // namespace

ValueWriter::ValueWriter(Database& db, int64_t trial_id, bool compress, TensorSummaryWriter& summary)
    : db_(db),
      trial_id_(trial_id),
      compress_(compress),
      summary_(summary),
      insert_value_(db.handle(), insert_sql("INSERT", kValueColumns, value_row_sql(0))),
      insert_value_fast_(db.handle(), insert_sql("INSERT OR IGNORE", kValueColumns, value_row_sql(0))),
      insert_value_batch_(db.handle(),
                          insert_sql("INSERT OR IGNORE", kValueColumns, rows_sql(value_row_sql, kValueBatch))),
      insert_scalar_batch_(db.handle(),
                           insert_sql("INSERT OR IGNORE", kScalarColumns, rows_sql(scalar_row_sql, kValueBatch))),
      step_workers_(db.handle(), R"sql(
        SELECT coalesce(max(worker_id = ?3), 0), coalesce(max(worker_id <> ?3), 0)
        FROM step_worker
        WHERE trial_id = ?1 AND step = ?2)sql"),
      insert_blob_(db.handle(), "INSERT INTO value_blob(value_id, data) VALUES (?, ?)"),
      max_value_id_(db.handle(), "SELECT coalesce(max(value_id), 0) FROM value_blob"),
      max_histogram_id_(db.handle(), "SELECT coalesce(max(histogram_id), 0) FROM value_histogram"),
      insert_event_file_(db.handle(), "INSERT INTO event_file(trial_id, path) VALUES (?, ?) ON CONFLICT DO NOTHING"),
      find_event_file_(db.handle(), "SELECT file_id FROM event_file WHERE trial_id = ? AND path = ?") {}

int64_t ValueWriter::event_file_id(const std::string& path) {
  if (auto it = event_files_.find(path); it != event_files_.end()) return it->second;
  insert_event_file_.bind(1, trial_id_).bind_text_static(2, path).run();
  find_event_file_.bind(1, trial_id_).bind_text_static(2, path);
  if (!find_event_file_.step()) throw Error(Status::database("event file " + path + " not recorded").at(db_.path()));
  const int64_t id = find_event_file_.int64(0);
  find_event_file_.reset();
  return event_files_.emplace(path, id).first->second;
}

size_t ValueWriter::write(PreparedFile& f, int64_t worker_id, int64_t tensor_step,
                          const std::function<int64_t(const std::string&)>& tensor_id,
                          const std::function<void(const Status&)>& report) {
  distributions_.clear();  // none left by a write that threw: its transaction is rolled back
  // value_blob ids are allocated here (value has no rowid): the caller's transaction holds the
  // write lock, so nobody else allocates until it commits.
  int64_t next_value_id = 0;
  if (max_value_id_.step()) next_value_id = max_value_id_.int64(0) + 1;
  max_value_id_.reset();
  // value_histogram ids likewise, as SQLite would choose them (the largest plus one).
  if (max_histogram_id_.step()) next_histogram_id_ = max_histogram_id_.int64(0) + 1;
  max_histogram_id_.reset();
  // Values of a (step, worker) exist only if its step_worker row does (same transaction).
  step_workers_.bind(1, trial_id_).bind(2, f.file.step).bind(3, worker_id);
  step_workers_.step();
  const StepWorkers before{step_workers_.int64(0) != 0, step_workers_.int64(1) != 0};
  step_workers_.reset();
  const bool fast = !before.this_worker;
  summary_.begin_file(f.file.step, tensor_step, worker_id, before);

  size_t stored = 0;
  std::vector<Row> batch, scalar_batch;
  batch.reserve(kValueBatch);
  scalar_batch.reserve(kValueBatch);
  int64_t file_id = 0;  // f.event_file's row, found once for the file's raw values
  for (auto& v : f.values) {
    if (!v.has_raw && !v.has_shape && !v.red_mask) continue;
    if (v.has_raw && !file_id) file_id = event_file_id(f.event_file);
    // Small values live in the value row itself: one B-tree insert fewer per scalar.
    Row r{&v,
          tensor_id(v.tensor),
          0,
          v.has_raw ? file_id : 0,
          v.has_raw && !v.raw_too_large && (!compress_ || blob_bytes_not_stored(v.blob.bytes())) &&
              v.blob.bytes().size() <= kInlineBlobBytes,
          false};
    r.adds_visible_step = summary_.adds_visible_step(r.tensor_id);
    if (r.apart()) r.value_id = next_value_id++;
    const bool scalar = fast && r.plain_scalar();
    std::vector<Row>& rows = scalar ? scalar_batch : batch;
    rows.push_back(r);
    if (rows.size() == kValueBatch) stored += flush(f, worker_id, tensor_step, rows, fast, scalar, report);
  }
  stored += flush(f, worker_id, tensor_step, scalar_batch, fast, true, report);  // short: row by row
  stored += flush(f, worker_id, tensor_step, batch, fast, false, report);
  flush_distributions();
  return stored;
}

// Inserts the rows, then their blobs stored apart; a full batch as one statement.
size_t ValueWriter::flush(PreparedFile& f, int64_t worker_id, int64_t tensor_step, std::vector<Row>& rows, bool fast,
                          bool scalars, const std::function<void(const Status&)>& report) {
  size_t stored = 0;
  if (fast) {
    auto insert = [&](Statement& ins, auto bind_row, size_t from, size_t n) {
      bind_shared(ins, trial_id_, tensor_step, f.file.step, worker_id);
      for (size_t i = 0; i < n; ++i) bind_row(ins, i, rows[from + i]);
      ins.step();
      ins.reset();
      if (static_cast<size_t>(sqlite3_changes(db_.handle())) != n)
        throw Error(Status::database("values of step " + std::to_string(f.file.step) + " for worker " + f.file.worker +
                                     " collided with stored values although none were recorded for it (" + f.file.path +
                                     ")")
                        .at(db_.path()));
    };
    if (rows.size() == kValueBatch && scalars) insert(insert_scalar_batch_, bind_scalar_row<Row>, 0, kValueBatch);
    else if (rows.size() == kValueBatch) insert(insert_value_batch_, bind_value_row<Row>, 0, kValueBatch);
    else
      for (size_t i = 0; i < rows.size(); ++i) insert(insert_value_fast_, bind_value_row<Row>, i, 1);
  }
  for (Row& r : rows) {
    if (!fast) {
      bind_shared(insert_value_, trial_id_, tensor_step, f.file.step, worker_id);
      bind_value_row(insert_value_, 0, r);
      try {
        insert_value_.step();
      } catch (const Error& e) {
        insert_value_.reset();
        report(Status::invalid("tensor '" + r.value->tensor + "' for worker " + f.file.worker +
                               " was already stored: " + e.status().cause())
                   .at(f.file.path, f.file.step));
        continue;
      }
      insert_value_.reset();
    }
    ++stored;
    const PreparedValue& v = *r.value;
    summary_.stored(r.tensor_id, v.has_raw ? static_cast<int64_t>(v.dtype) : kNoDtype,
                    v.has_raw || v.has_shape ? std::string_view(v.shape_text) : kNoShape, r.adds_visible_step);
    write_distribution(r, worker_id, tensor_step, f.file.step);
    if (!r.apart()) continue;
    const std::string_view blob = r.value->blob.bytes();
    insert_blob_.bind(1, r.value_id).bind_blob_static(2, blob.data(), blob.size()).run();
    std::string().swap(r.value->blob.owned);  // release the tensor as soon as it is stored
  }
  rows.clear();
  return stored;
}

void ValueWriter::write_distribution(const Row& r, int64_t worker_id, int64_t tensor_step, int64_t step) {
  const PreparedValue& v = *r.value;
  if (!v.has_distribution || v.red_src == ReductionSource::kScalarElement) return;
  const Distribution& d = v.distribution;
  const bool has_histogram = d.negative + d.positive + d.zero > 0;
  distributions_.push_back(
      {&d, r.tensor_id, tensor_step, step - tensor_step, worker_id, has_histogram ? next_histogram_id_++ : 0});
  if (distributions_.size() == kValueBatch) flush_distributions();
}

Statement& ValueWriter::multi_row_insert(std::vector<std::unique_ptr<Statement>>& cache, const char* table,
                                         const char* columns, int params, size_t n) {
  if (cache.size() < n) cache.resize(n);
  if (!cache[n - 1])
    cache[n - 1] = std::make_unique<Statement>(db_.handle(), multi_row_insert_sql(table, columns, params, n));
  return *cache[n - 1];
}

void ValueWriter::flush_distributions() {
  size_t histograms = 0;
  for (const PendingDistribution& p : distributions_) histograms += p.histogram_id != 0;
  if (histograms) {
    Statement& ins =
        multi_row_insert(insert_histograms_, "value_histogram", "histogram_id, buckets", kHistogramParams, histograms);
    int base = 0;
    for (const PendingDistribution& p : distributions_) {
      if (!p.histogram_id) continue;
      ins.bind(base + kHistIdParam, p.histogram_id)
          .bind_blob_static(base + kHistBucketsParam, p.distribution->histogram.data(),
                            p.distribution->histogram.size());
      base += kHistogramParams;
    }
    ins.run();
  }
  if (!distributions_.empty()) {
    Statement& ins = multi_row_insert(insert_distributions_, "value_distribution", kDistributionColumns,
                                      kDistributionParams, distributions_.size());
    int base = 0;
    for (const PendingDistribution& p : distributions_) {
      const Distribution& d = *p.distribution;
      ins.bind(base + kDistTensorIdParam, p.tensor_id)
          .bind(base + kDistTensorStepParam, p.tensor_step)
          .bind(base + kDistStepOffsetParam, p.step_offset)
          .bind(base + kDistWorkerIdParam, p.worker_id)
          .bind(base + kNanParam, d.nan)
          .bind(base + kPosInfParam, d.pos_inf)
          .bind(base + kNegInfParam, d.neg_inf)
          .bind(base + kZeroParam, d.zero)
          .bind(base + kNegativeParam, d.negative)
          .bind(base + kPositiveParam, d.positive);
      for (int i = 0; i < kDistributionPercentiles; ++i)  // NaN stays unbound: NULL
        if (!std::isnan(d.percentile[i])) ins.bind(base + kFirstPercentileParam + i, d.percentile[i]);
      if (p.histogram_id) ins.bind(base + kHistogramIdParam, p.histogram_id);
      base += kDistributionParams;
    }
    ins.run();
  }
  distributions_.clear();
}

}  // namespace trialdb
