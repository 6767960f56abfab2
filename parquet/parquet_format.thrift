// The part of the Parquet file metadata that trialdb writes, as Thrift IDL: enum values and field
// ids are those of the Parquet format specification (parquet.thrift of apache/parquet-format),
// so Thrift's compact protocol encodes these structures exactly as every Parquet reader expects.
// Only what a flat file of optional columns, PLAIN or dictionary-encoded data pages v1 (with
// their dictionary pages) and per-column statistics needs is declared; a reader skips nothing
// here because nothing else is written.

namespace cpp trialdb.parquet.format

enum Type {
  BOOLEAN = 0;
  INT32 = 1;
  INT64 = 2;
  INT96 = 3;
  FLOAT = 4;
  DOUBLE = 5;
  BYTE_ARRAY = 6;
  FIXED_LEN_BYTE_ARRAY = 7;
}

enum ConvertedType {
  UTF8 = 0;
}

enum FieldRepetitionType {
  REQUIRED = 0;
  OPTIONAL = 1;
  REPEATED = 2;
}

struct Statistics {
  1: optional binary max;
  2: optional binary min;
  3: optional i64 null_count;
  4: optional i64 distinct_count;
  5: optional binary max_value;
  6: optional binary min_value;
}

struct StringType {}

union LogicalType {
  1: StringType STRING;
}

struct SchemaElement {
  1: optional Type type;
  2: optional i32 type_length;
  3: optional FieldRepetitionType repetition_type;
  4: required string name;
  5: optional i32 num_children;
  6: optional ConvertedType converted_type;
  10: optional LogicalType logicalType;
}

enum Encoding {
  PLAIN = 0;
  PLAIN_DICTIONARY = 2;
  RLE = 3;
  BIT_PACKED = 4;
  RLE_DICTIONARY = 8;
}

enum CompressionCodec {
  UNCOMPRESSED = 0;
  SNAPPY = 1;
  GZIP = 2;
  ZSTD = 6;
}

enum PageType {
  DATA_PAGE = 0;
  INDEX_PAGE = 1;
  DICTIONARY_PAGE = 2;
  DATA_PAGE_V2 = 3;
}

struct DataPageHeader {
  1: required i32 num_values;
  2: required Encoding encoding;
  3: required Encoding definition_level_encoding;
  4: required Encoding repetition_level_encoding;
  5: optional Statistics statistics;
}

struct DictionaryPageHeader {
  1: required i32 num_values;
  2: required Encoding encoding;
  3: optional bool is_sorted;
}

struct PageHeader {
  1: required PageType type;
  2: required i32 uncompressed_page_size;
  3: required i32 compressed_page_size;
  4: optional i32 crc;
  5: optional DataPageHeader data_page_header;
  7: optional DictionaryPageHeader dictionary_page_header;
}

struct KeyValue {
  1: required string key;
  2: optional string value;
}

struct ColumnMetaData {
  1: required Type type;
  2: required list<Encoding> encodings;
  3: required list<string> path_in_schema;
  4: required CompressionCodec codec;
  5: required i64 num_values;
  6: required i64 total_uncompressed_size;
  7: required i64 total_compressed_size;
  8: optional list<KeyValue> key_value_metadata;
  9: required i64 data_page_offset;
  10: optional i64 index_page_offset;
  11: optional i64 dictionary_page_offset;
  12: optional Statistics statistics;
}

struct ColumnChunk {
  1: optional string file_path;
  2: required i64 file_offset;
  3: optional ColumnMetaData meta_data;
}

struct RowGroup {
  1: required list<ColumnChunk> columns;
  2: required i64 total_byte_size;
  3: required i64 num_rows;
  5: optional i64 file_offset;
  6: optional i64 total_compressed_size;
  7: optional i16 ordinal;
}

struct TypeDefinedOrder {}

union ColumnOrder {
  1: TypeDefinedOrder TYPE_ORDER;
}

struct FileMetaData {
  1: required i32 version;
  2: required list<SchemaElement> schema;
  3: required i64 num_rows;
  4: required list<RowGroup> row_groups;
  5: optional list<KeyValue> key_value_metadata;
  6: optional string created_by;
  7: optional list<ColumnOrder> column_orders;
}
