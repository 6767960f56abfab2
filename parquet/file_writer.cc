// A Parquet file, row groups then footer (file_writer.h).
#include "parquet/file_writer.h"

#include "parquet/thrift_compact.h"
#include "schema/status.h"

namespace trialdb::parquet {

namespace {

constexpr std::string_view kMagic = "PAR1";
constexpr int32_t kFormatVersion = 1;  // data pages v1
constexpr const char* kCreatedBy = "trialdb";

format::SchemaElement leaf(const Column& c) {
  format::SchemaElement e;
  e.__set_name(c.name);
  e.__set_repetition_type(format::FieldRepetitionType::OPTIONAL);
  switch (c.type) {
    case ColumnType::kBoolean: e.__set_type(format::Type::BOOLEAN); break;
    case ColumnType::kInt64: e.__set_type(format::Type::INT64); break;
    case ColumnType::kDouble: e.__set_type(format::Type::DOUBLE); break;
    case ColumnType::kBytes: e.__set_type(format::Type::BYTE_ARRAY); break;
    case ColumnType::kString: {
      e.__set_type(format::Type::BYTE_ARRAY);
      e.__set_converted_type(format::ConvertedType::UTF8);
      format::LogicalType logical;
      logical.__set_STRING(format::StringType());
      e.__set_logicalType(logical);
      break;
    }
  }
  return e;
}

}  // namespace

FileWriter::FileWriter(std::vector<Column> columns, ByteSink& sink, WriterOptions options)
    : columns_(std::move(columns)), sink_(sink), options_(options) {
  writers_.reserve(columns_.size());
  for (const Column& c : columns_) {
    writers_.push_back(std::make_unique<ColumnWriter>(c, options_.page_bytes));
    if (writers_.size() > 1) writers_.back()->follow(writers_[writers_.size() - 2].get());
  }
  put(kMagic);
}

size_t FileWriter::pages_shared() const {
  size_t n = 0;
  for (const auto& w : writers_) n += w->pages_shared();
  return n;
}

void FileWriter::too_many_values() const {
  throw Error(ErrorKind::kInvalidInput, "parquet row " + std::to_string(rows_) + ": more values than its " +
                                            std::to_string(columns_.size()) + " columns");
}

void FileWriter::other_run_length(size_t rows) const {
  throw Error(ErrorKind::kInvalidInput, "parquet row " + std::to_string(rows_) + ": column '" +
                                            columns_[next_column_].name + "' got " + std::to_string(rows) +
                                            " values where the first got " + std::to_string(run_rows_));
}

void FileWriter::other_key_count(size_t values, size_t keys) const {
  throw Error(ErrorKind::kInvalidInput, "parquet row " + std::to_string(rows_) + ": " + std::to_string(keys) +
                                            " keys for " + std::to_string(values) + " values");
}

void FileWriter::end_row() {
  if (next_column_ != writers_.size())
    throw Error(ErrorKind::kInvalidInput, "parquet row " + std::to_string(rows_) + ": " + std::to_string(next_column_) +
                                              " values for " + std::to_string(columns_.size()) + " columns");
  next_column_ = 0;
  rows_ += static_cast<int64_t>(run_rows_);
  group_rows_ += static_cast<int64_t>(run_rows_);
  size_t buffered = 0;
  for (const auto& w : writers_) buffered += w->uncompressed_bytes();
  if (buffered >= options_.row_group_bytes) flush_row_group();
}

void FileWriter::put(std::string_view bytes) {
  sink_.write(bytes);
  offset_ += bytes.size();
}

void FileWriter::flush_row_group() {
  if (group_rows_ == 0) return;
  format::RowGroup group;
  std::vector<format::ColumnChunk> chunks;
  const int64_t group_offset = static_cast<int64_t>(offset_);
  int64_t uncompressed = 0;
  for (auto& w : writers_) {
    ColumnChunkBytes bytes = w->finish_chunk();
    if (bytes.dictionary_page_bytes) bytes.meta.__set_dictionary_page_offset(static_cast<int64_t>(offset_));
    bytes.meta.__set_data_page_offset(static_cast<int64_t>(offset_ + bytes.dictionary_page_bytes));
    format::ColumnChunk chunk;
    chunk.__set_file_offset(static_cast<int64_t>(offset_));
    chunk.__set_meta_data(bytes.meta);
    uncompressed += bytes.meta.total_uncompressed_size;
    for (const std::string& page : bytes.pages) put(page);
    chunks.push_back(std::move(chunk));
  }
  group.__set_columns(chunks);
  group.__set_num_rows(group_rows_);
  group.__set_total_byte_size(uncompressed);
  group.__set_file_offset(group_offset);
  group.__set_total_compressed_size(static_cast<int64_t>(offset_) - group_offset);
  group.__set_ordinal(static_cast<int16_t>(row_groups_.size()));
  row_groups_.push_back(std::move(group));
  group_rows_ = 0;
}

void FileWriter::finish() {
  if (next_column_ != 0) throw Error(ErrorKind::kInvalidInput, "parquet: finish() in the middle of a row");
  flush_row_group();
  format::FileMetaData meta;
  meta.__set_version(kFormatVersion);
  std::vector<format::SchemaElement> schema;
  format::SchemaElement root;
  root.__set_name("schema");
  root.__set_num_children(static_cast<int32_t>(columns_.size()));
  schema.push_back(root);
  std::vector<format::ColumnOrder> orders;
  for (const Column& c : columns_) {
    schema.push_back(leaf(c));
    format::ColumnOrder order;
    order.__set_TYPE_ORDER(format::TypeDefinedOrder());
    orders.push_back(order);
  }
  meta.__set_schema(schema);
  meta.__set_num_rows(rows_);
  meta.__set_row_groups(row_groups_);
  meta.__set_created_by(kCreatedBy);
  meta.__set_column_orders(orders);
  const std::string footer = compact_bytes(meta);
  put(footer);
  const auto length = static_cast<uint32_t>(footer.size());
  put(std::string_view(reinterpret_cast<const char*>(&length), sizeof length));
  put(kMagic);
}

}  // namespace trialdb::parquet
