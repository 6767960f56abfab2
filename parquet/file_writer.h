// A Parquet file written row by row to a ByteSink: "PAR1", row groups of about row_group_bytes
// (before compression) each, then the footer (FileMetaData, Thrift compact) and "PAR1". Memory
// holds one row group at most, so a file of any size is written in bounded memory.
//
// Rows are given a value per column in column order (add_*), then end_row(). Rows that repeat a
// key over many rows (histogram_buckets repeats a value's key over its buckets) can be given as a
// run of n rows: each column's n values in column order (add_nulls, add_repeated, add_values),
// then end_row(). Nothing here knows where rows come from (no SQLite) or where bytes go (the sink).
#pragma once
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "parquet/column.h"
#include "parquet/column_writer.h"

namespace trialdb::parquet {

class ByteSink {
 public:
  virtual ~ByteSink() = default;
  virtual void write(std::string_view bytes) = 0;
};

struct WriterOptions {
  size_t row_group_bytes = 64u << 20;  // scanned well by every engine (tens of MB)
  size_t page_bytes = 1u << 20;
};

class FileWriter {
 public:
  FileWriter(std::vector<Column> columns, ByteSink& sink, WriterOptions options = {});

  void add_null() { next(1).add_null(); }
  void add(bool v) { next(1).add(v); }
  void add(int64_t v) { next(1).add(v); }
  void add(double v) { next(1).add(v); }
  void add(std::string_view v) { next(1).add(v); }
  // A column's values in a run of rows: the run's length is the first column's count.
  void add_nulls(size_t rows) { next(rows).add_nulls(rows); }
  void add_repeated(bool v, size_t rows) { next(rows).add_repeated(v, rows); }
  void add_repeated(int64_t v, size_t rows) { next(rows).add_repeated(v, rows); }
  void add_repeated(double v, size_t rows) { next(rows).add_repeated(v, rows); }
  void add_repeated(std::string_view v, size_t rows) { next(rows).add_repeated(v, rows); }
  void add_values(std::span<const int64_t> v) { next(v.size()).add_values(v); }
  void add_values(std::span<const double> v) { next(v.size()).add_values(v); }
  // The same, each value named by a key (ColumnWriter::add_values): one key a value.
  void add_values(std::span<const int64_t> v, std::span<const int64_t> keys) {
    next(keyed_run(v.size(), keys.size())).add_values(v, keys);
  }
  void add_values(std::span<const double> v, std::span<const int64_t> keys) {
    next(keyed_run(v.size(), keys.size())).add_values(v, keys);
  }
  // Ends the row (or run of rows); throws Error (kInvalidInput) when it did not get one value per
  // column (the same number of values in each column).
  void end_row();
  // Data pages a column took from the column before it rather than compressing the same bytes
  // again (ColumnWriter::follow).
  size_t pages_shared() const;
  // Writes the last row group and the footer. Call once; nothing may be added after.
  void finish();

  const std::vector<Column>& columns() const { return columns_; }
  int64_t rows() const { return rows_; }
  uint64_t bytes_written() const { return offset_; }

 private:
  // The next column's writer, given `rows` values.
  ColumnWriter& next(size_t rows) {
    if (next_column_ >= writers_.size()) too_many_values();
    if (next_column_ == 0) run_rows_ = rows;
    else if (rows != run_rows_) other_run_length(rows);
    return *writers_[next_column_++];
  }
  // `values`, when `keys` is as many.
  size_t keyed_run(size_t values, size_t keys) const {
    if (keys != values) other_key_count(values, keys);
    return values;
  }
  [[noreturn]] void too_many_values() const;
  [[noreturn]] void other_key_count(size_t values, size_t keys) const;
  [[noreturn]] void other_run_length(size_t rows) const;
  void put(std::string_view bytes);
  void flush_row_group();

  std::vector<Column> columns_;
  ByteSink& sink_;
  WriterOptions options_;
  std::vector<std::unique_ptr<ColumnWriter>> writers_;  // owned apart: each holds a zstd context
  size_t next_column_ = 0;
  size_t run_rows_ = 0;  // the rows the values of the row being given stand for
  int64_t rows_ = 0;
  int64_t group_rows_ = 0;
  uint64_t offset_ = 0;
  std::vector<format::RowGroup> row_groups_;
};

}  // namespace trialdb::parquet
