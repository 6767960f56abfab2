// A Parquet file written row by row to a ByteSink: "PAR1", row groups of about row_group_bytes
// (before compression) each, then the footer (FileMetaData, Thrift compact) and "PAR1". Memory
// holds one row group at most, so a file of any size is written in bounded memory.
//
// Rows are given a value per column in column order (add_*), then end_row(). Nothing here knows
// where rows come from (no SQLite) or where bytes go (the sink).
#pragma once
#include <cstdint>
#include <memory>
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

  void add_null() { next().add_null(); }
  void add(bool v) { next().add(v); }
  void add(int64_t v) { next().add(v); }
  void add(double v) { next().add(v); }
  void add(std::string_view v) { next().add(v); }
  // Ends the row; throws Error (kInvalidInput) when it did not get one value per column.
  void end_row();
  // Writes the last row group and the footer. Call once; nothing may be added after.
  void finish();

  const std::vector<Column>& columns() const { return columns_; }
  int64_t rows() const { return rows_; }
  uint64_t bytes_written() const { return offset_; }

 private:
  ColumnWriter& next() {
    if (next_column_ >= writers_.size()) too_many_values();
    return *writers_[next_column_++];
  }
  [[noreturn]] void too_many_values() const;
  void put(std::string_view bytes);
  void flush_row_group();

  std::vector<Column> columns_;
  ByteSink& sink_;
  WriterOptions options_;
  std::vector<std::unique_ptr<ColumnWriter>> writers_;  // owned apart: each holds a zstd context
  size_t next_column_ = 0;
  int64_t rows_ = 0;
  int64_t group_rows_ = 0;
  uint64_t offset_ = 0;
  std::vector<format::RowGroup> row_groups_;
};

}  // namespace trialdb::parquet
