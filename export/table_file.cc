// One public view of one trial as a Parquet file (table_file.h).
#include "export/table_file.h"

#include <zlib.h>

#include <span>

#include "kernels/bucket_grid.h"
#include "schema/histogram_blob.h"
#include "schema/reduction_kinds.h"

namespace trialdb::exporter {

namespace {

// Passes bytes on to the output file, counting them and computing their CRC-32 on the way.
class ChecksumSink : public parquet::ByteSink {
 public:
  explicit ChecksumSink(OutputFile& out) : out_(out), crc_(::crc32(0, nullptr, 0)) {}
  void write(std::string_view bytes) override {
    out_.write(bytes);
    crc_ = ::crc32_z(crc_, reinterpret_cast<const Bytef*>(bytes.data()), bytes.size());
    bytes_ += bytes.size();
  }
  uint32_t crc32() const { return static_cast<uint32_t>(crc_); }
  uint64_t bytes() const { return bytes_; }

 private:
  OutputFile& out_;
  uLong crc_;
  uint64_t bytes_ = 0;
};

bool view_exists(Database& db, const std::string& name) {
  Statement q(db.handle(), "SELECT 1 FROM sqlite_schema WHERE type = 'view' AND name = ?1");
  q.bind(1, name);
  return q.step();
}

// histogram_buckets' columns made from a value's histogram (lo, hi, count), after its key
// columns, and the column of histogram_blobs they are made from.
constexpr size_t kBucketColumns = 3;
constexpr const char* kHistogramBlobColumn = "buckets";
constexpr const char* kHistogramBlobsView = "histogram_blobs";
// reductions' columns made from each of a value's kinds (reduction_kinds.h).
constexpr const char* kReductionColumn = "reduction";
constexpr const char* kAbsColumn = "abs";
constexpr const char* kValueColumn = "value";
constexpr uint64_t kRowsBetweenReports = 1024;  // rows_read: often enough for a bar, at no cost

// The position of a column the view computes per kind after value (e.g. computed) among
// reduction_kind_columns(), or -1.
int kind_column(const parquet::Column& c) {
  const std::vector<RestColumn>& columns = reduction_kind_columns();
  for (size_t i = 0; i < columns.size(); ++i)
    if (columns[i].name == c.name) return static_cast<int>(i);
  return -1;
}

bool made_per_kind(const parquet::Column& c) {
  return c.name == kReductionColumn || c.name == kAbsColumn || c.name == kValueColumn || kind_column(c) >= 0;
}

std::string quoted_identifier(const std::string& name) { return "\"" + name + "\""; }

// What the rows are selected from.
std::string source_sql(sqlite3* db, const PublicTable& table, const std::vector<ReductionKind>& kinds) {
  switch (table.source) {
    case RowSource::kView: return quoted_identifier(table.name);
    case RowSource::kHistogramRuns: return quoted_identifier(kHistogramBlobsView);
    case RowSource::kReductionKinds: {
      // Appended rather than `"(" + ...`, which GCC 12 at -O3 warns about (-Wrestrict, GCC bug 105329).
      std::string sql(1, '(');
      sql += reductions_by_value_sql(kinds, db);
      return sql += ')';
    }
  }
  return "";
}

// The view that must exist for the table to have rows.
std::string source_view(const PublicTable& table) {
  return table.source == RowSource::kHistogramRuns ? kHistogramBlobsView : table.name;
}

// The columns of the source read for each of its rows.
std::vector<std::string> read_columns(const PublicTable& table, const std::vector<ReductionKind>& kinds) {
  std::vector<std::string> names;
  for (const parquet::Column& c : table.columns)
    if (table.source != RowSource::kReductionKinds || !made_per_kind(c)) names.push_back(c.name);
  if (table.source == RowSource::kHistogramRuns) {
    names.resize(names.size() - kBucketColumns);
    names.push_back(kHistogramBlobColumn);
  }
  if (table.source == RowSource::kReductionKinds)
    for (const ReductionKind& k : kinds) {
      names.push_back("has_" + std::to_string(k.idx));
      names.push_back("value_" + std::to_string(k.idx));
      for (const RestColumn& c : reduction_kind_columns()) names.push_back(c.name + "_" + std::to_string(k.idx));
    }
  return names;
}

// One SQLite cell read once as its export type, so a value's key columns are read once for all
// of its rows. Strings point into the statement's row: valid until its next step.
struct Cell {
  bool null = true;
  int64_t integer = 0;
  double real = 0;
  std::string_view bytes;
};

// Each sqlite3_column_* call takes the connection's mutex (the files written at once share it),
// so the type is asked only when the value read could be NULL's: 0, 0.0, or no pointer.
Cell read_cell(const Statement& q, int col, parquet::ColumnType type) {
  sqlite3_stmt* s = q.handle();
  const auto is_null = [&] { return sqlite3_column_type(s, col) == SQLITE_NULL; };
  Cell c;
  switch (type) {
    case parquet::ColumnType::kBoolean:
    case parquet::ColumnType::kInt64: {
      const int64_t v = sqlite3_column_int64(s, col);
      if (v == 0 && is_null()) return c;
      c.integer = type == parquet::ColumnType::kBoolean ? v != 0 : v;
      break;
    }
    case parquet::ColumnType::kDouble: {
      const double v = sqlite3_column_double(s, col);
      if (v == 0 && is_null()) return c;
      c.real = v;
      break;
    }
    case parquet::ColumnType::kString:
    case parquet::ColumnType::kBytes: {
      const auto* p = type == parquet::ColumnType::kString ? reinterpret_cast<const char*>(sqlite3_column_text(s, col))
                                                           : static_cast<const char*>(sqlite3_column_blob(s, col));
      if (!p && is_null()) return c;
      c.bytes = std::string_view(p, p ? static_cast<size_t>(sqlite3_column_bytes(s, col)) : 0);
      break;
    }
  }
  c.null = false;
  return c;
}

// The cell as the column's values of a run of `rows` rows.
void add_cell(parquet::FileWriter& w, const Cell& c, parquet::ColumnType type, size_t rows = 1) {
  if (c.null) {
    w.add_nulls(rows);
    return;
  }
  switch (type) {
    case parquet::ColumnType::kBoolean: w.add_repeated(c.integer != 0, rows); break;
    case parquet::ColumnType::kInt64: w.add_repeated(c.integer, rows); break;
    case parquet::ColumnType::kDouble: w.add_repeated(c.real, rows); break;
    case parquet::ColumnType::kString:
    case parquet::ColumnType::kBytes: w.add_repeated(c.bytes, rows); break;
  }
}

// One row of histogram_blobs as the rows of histogram_buckets: one per non-empty bucket, its key
// columns, then the bucket's edges and count, written as one run of rows. The edges are
// bucket_grid.h's, as the view's (histogram_each).
class HistogramExpander {
 public:
  explicit HistogramExpander(const PublicTable& table) : table_(table), keys_(table.columns.size() - kBucketColumns) {
    cells_.resize(keys_);
  }

  // Returns the number of rows written.
  size_t write(parquet::FileWriter& w, const Statement& q) {
    for (size_t c = 0; c < keys_; ++c) cells_[c] = read_cell(q, static_cast<int>(c), table_.columns[c].type);
    const Cell blob = read_cell(q, static_cast<int>(keys_), parquet::ColumnType::kBytes);
    if (blob.null) return 0;  // no finite elements
    // The non-empty buckets of each run, the edges and counts taken straight from the runs into
    // the first `rows` entries of the buffers, which only grow: every bucket is written and the
    // row kept when its count is not zero, without a branch or a capacity check per bucket.
    size_t rows = 0;
    HistogramBlobReader runs(blob.bytes);
    int64_t bucket;
    const std::vector<uint64_t>* counts;
    while (runs.next(&bucket, &counts)) {
      if (const size_t room = rows + counts->size(); room > counts_.size()) {
        bucket_numbers_.resize(room);
        lo_.resize(room);
        hi_.resize(room);
        counts_.resize(room);
      }
      for (const uint64_t count : *counts) {
        bucket_numbers_[rows] = bucket;
        lo_[rows] = bucket_lo(bucket);
        hi_[rows] = bucket_hi(bucket);
        counts_[rows] = static_cast<int64_t>(count);
        rows += count != 0;
        ++bucket;
      }
    }
    if (const Status& st = runs.error(); !st.is_ok())
      throw Error(ErrorKind::kDatabase, std::string(kHistogramBlobsView) + ": the histogram of tensor '" +
                                            std::string(cells_[0].bytes) + "' at step " +
                                            std::to_string(cells_[1].integer) + ": " + st.cause());
    if (rows == 0) return 0;
    for (size_t c = 0; c < keys_; ++c) add_cell(w, cells_[c], table_.columns[c].type, rows);
    // The edges are named by their bucket's number and the counts by themselves: the columns'
    // dictionaries find them by an array index (parquet/number_dictionary.h).
    const std::span<const int64_t> bucket_numbers(bucket_numbers_.data(), rows), counts_of_rows(counts_.data(), rows);
    w.add_values(std::span<const double>(lo_.data(), rows), bucket_numbers);
    w.add_values(std::span<const double>(hi_.data(), rows), bucket_numbers);
    w.add_values(counts_of_rows, counts_of_rows);
    w.end_row();
    return rows;
  }

 private:
  const PublicTable& table_;
  const size_t keys_;
  std::vector<Cell> cells_;
  // Buffers kept from value to value; only the first `rows` entries are the value's.
  std::vector<int64_t> bucket_numbers_;
  std::vector<double> lo_, hi_;
  std::vector<int64_t> counts_;
};

// One row of reductions_by_value_sql as the rows of `reductions`: one per kind the value has,
// in kind order, the value's columns read once for all of them.
class ReductionExpander {
 public:
  ReductionExpander(const PublicTable& table, const std::vector<ReductionKind>& kinds)
      : table_(table), kinds_(kinds), per_kind_(2 + static_cast<int>(reduction_kind_columns().size())) {
    int read = 0;
    for (const parquet::Column& c : table.columns) {
      if (!made_per_kind(c)) sources_.push_back({Source::kValue, read++});
      else if (c.name == kReductionColumn) sources_.push_back({Source::kKindName, 0});
      else if (c.name == kAbsColumn) sources_.push_back({Source::kKindAbs, 0});
      else if (c.name == kValueColumn) sources_.push_back({Source::kKindCell, 1});
      else sources_.push_back({Source::kKindCell, 2 + kind_column(c)});
    }
    first_kind_column_ = read;
    cells_.resize(table.columns.size());
  }

  // Returns the number of rows written.
  size_t write(parquet::FileWriter& w, const Statement& q) {
    size_t rows = 0;
    for (size_t c = 0; c < table_.columns.size(); ++c)
      if (sources_[c].source == Source::kValue) cells_[c] = read_cell(q, sources_[c].at, table_.columns[c].type);
    for (size_t k = 0; k < kinds_.size(); ++k) {
      const int has = first_kind_column_ + per_kind_ * static_cast<int>(k);
      if (q.int64(has) == 0) continue;
      for (size_t c = 0; c < table_.columns.size(); ++c) {
        const parquet::ColumnType type = table_.columns[c].type;
        switch (sources_[c].source) {
          case Source::kValue: add_cell(w, cells_[c], type); break;
          case Source::kKindName: w.add(std::string_view(kinds_[k].reduction)); break;
          case Source::kKindAbs: w.add(kinds_[k].abs); break;
          case Source::kKindCell: add_cell(w, read_cell(q, has + sources_[c].at, type), type); break;
        }
      }
      w.end_row();
      ++rows;
    }
    return rows;
  }

 private:
  // Where a table column's cell comes from: the value's columns, read once for all its kinds;
  // the kind's name or abs; or the kind's group of statement columns (has_<idx>, value_<idx>, then
  // reduction_kind_columns()), `at` columns after its has_<idx>.
  enum class Source { kValue, kKindName, kKindAbs, kKindCell };
  struct ColumnSource {
    Source source;
    int at;  // kValue: the statement column; kKindCell: the offset in the kind's group
  };
  const PublicTable& table_;
  const std::vector<ReductionKind>& kinds_;
  const int per_kind_;  // statement columns per kind
  std::vector<ColumnSource> sources_;
  int first_kind_column_ = 0;
  std::vector<Cell> cells_;
};

}  // namespace

std::string select_sql(sqlite3* db, const PublicTable& table, const std::vector<ReductionKind>& kinds, bool by_steps) {
  std::string sql = "SELECT ";
  const std::vector<std::string> columns = read_columns(table, kinds);
  for (size_t i = 0; i < columns.size(); ++i) sql += (i ? ", v." : "v.") + quoted_identifier(columns[i]);
  if (by_steps) sql += ", " + table.global_step;
  sql += "\nFROM " + source_sql(db, table, kinds) + " v\nWHERE v.trial = ?1";
  if (by_steps) sql += " AND (" + table.global_step + ") > ?2 AND (" + table.global_step + ") <= ?3";
  return sql;
}

WrittenFile write_table_file(Database& db, const PublicTable& table, const std::string& trial,
                             std::optional<StepRange> steps, OutputFile& out, const parquet::WriterOptions& options,
                             const RowsRead& rows_read) {
  ChecksumSink sink(out);
  parquet::FileWriter writer(table.columns, sink, options);
  WrittenFile file;
  if (view_exists(db, source_view(table))) {
    const std::vector<ReductionKind> kinds =
        table.source == RowSource::kReductionKinds ? reduction_kinds(db.handle()) : std::vector<ReductionKind>{};
    Statement q(db.handle(), select_sql(db.handle(), table, kinds, steps.has_value()));
    q.bind(1, trial);
    if (steps) q.bind(2, steps->after).bind(3, steps->through);
    const int step_col = static_cast<int>(read_columns(table, kinds).size());
    std::optional<HistogramExpander> histograms;
    if (table.source == RowSource::kHistogramRuns) histograms.emplace(table);
    std::optional<ReductionExpander> reductions;
    if (table.source == RowSource::kReductionKinds) reductions.emplace(table, kinds);
    uint64_t read = 0;
    while (q.step()) {
      if (rows_read && ++read % kRowsBetweenReports == 0) rows_read(read, sink.bytes());
      if (histograms) {
        if (histograms->write(writer, q) == 0) continue;
      } else if (reductions) {
        if (reductions->write(writer, q) == 0) continue;
      } else {
        for (size_t c = 0; c < table.columns.size(); ++c)
          add_cell(writer, read_cell(q, static_cast<int>(c), table.columns[c].type), table.columns[c].type);
        writer.end_row();
      }
      if (steps) {
        const int64_t step = q.int64(step_col);
        file.first_step = file.first_step ? std::min(*file.first_step, step) : step;
        file.last_step = file.last_step ? std::max(*file.last_step, step) : step;
      }
    }
  }
  writer.finish();
  file.rows = writer.rows();
  file.bytes = sink.bytes();
  file.crc32 = sink.crc32();
  return file;
}

}  // namespace trialdb::exporter
