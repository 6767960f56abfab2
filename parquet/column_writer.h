// One column of the row group being written: its values PLAIN-encoded into data pages (v1) of
// about page_bytes each, with definition levels (1 = a value, 0 = NULL), each page compressed
// with zstd as soon as it is full, and the chunk's statistics. finish_chunk() hands the row
// group's pages over and starts the next row group.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "parquet/column.h"
#include "parquet/parquet_format_types.h"
#include "parquet/statistics.h"
#include "parquet/zstd_codec.h"

namespace trialdb::parquet {

// A column chunk ready to be placed in the file: its pages (headers and compressed data) and its
// metadata, data_page_offset left for the file writer to set.
struct ColumnChunkBytes {
  std::string pages;
  format::ColumnMetaData meta;
};

class ColumnWriter {
 public:
  ColumnWriter(Column column, size_t page_bytes);

  void add_null();
  void add(bool v);
  void add(int64_t v);
  void add(double v);
  void add(std::string_view v);   // kString and kBytes

  const Column& column() const { return column_; }
  // Bytes of the row group so far before compression (closed pages and the open one).
  size_t uncompressed_bytes() const { return chunk_uncompressed_ + page_values_.size() + levels_.size() / 8; }
  ColumnChunkBytes finish_chunk();

 private:
  void value_added();
  void close_page();
  std::string page_body() const;   // levels with their length, then the values

  Column column_;
  size_t page_bytes_;
  ZstdCodec codec_;
  std::vector<uint8_t> levels_;   // the open page's definition levels
  std::string page_values_;       // its PLAIN values (booleans: one byte each until the page closes)
  std::string chunk_pages_;
  int64_t chunk_values_ = 0;
  int64_t chunk_uncompressed_ = 0;
  ColumnStatistics stats_;
};

}  // namespace trialdb::parquet
