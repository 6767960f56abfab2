// A column of a Parquet file as trialdb writes it: a name and one of the few types the public
// views hold. Every column is OPTIONAL (a view may give NULL anywhere).
#pragma once
#include <string>

namespace trialdb::parquet {

enum class ColumnType {
  kBoolean,  // BOOLEAN
  kInt64,    // INT64
  kDouble,   // DOUBLE
  kString,   // BYTE_ARRAY annotated UTF8 / STRING
  kBytes,    // BYTE_ARRAY, raw bytes
};

struct Column {
  std::string name;
  ColumnType type;
};

}  // namespace trialdb::parquet
