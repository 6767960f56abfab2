// Per-column-chunk statistics: NULL count and the minimum and maximum value in the column type's
// own order (signed for INT64, IEEE for DOUBLE, unsigned bytewise for strings), which engines use
// to skip row groups. Following the format specification, NaN takes no part in min/max, a zero
// minimum is written -0.0 and a zero maximum +0.0. A byte-array value longer than
// kMaxStatisticsBytes leaves the chunk without min/max rather than storing a huge bound.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "parquet/column.h"
#include "parquet/parquet_format_types.h"

namespace trialdb::parquet {

inline constexpr size_t kMaxStatisticsBytes = 1024;

class ColumnStatistics {
 public:
  explicit ColumnStatistics(ColumnType type) : type_(type) {}
  void add_null() { ++nulls_; }
  void add_nulls(int64_t n) { nulls_ += n; }
  void add(bool v) { add(static_cast<int64_t>(v)); }
  void add(int64_t v);
  void add(double v);
  void add(std::string_view v);
  // Each of the values, as add() one by one would (a loop the compiler can keep in registers).
  void add_values(std::span<const int64_t> values);
  void add_values(std::span<const double> values);
  // The Thrift form: null_count, and min_value / max_value when known, PLAIN-encoded.
  format::Statistics to_thrift() const;
  void reset() { *this = ColumnStatistics(type_); }

 private:
  ColumnType type_;
  int64_t nulls_ = 0;
  bool has_bounds_ = false;
  bool bounds_dropped_ = false;  // a byte-array value too long for statistics
  int64_t int_min_ = 0, int_max_ = 0;
  double real_min_ = 0, real_max_ = 0;
  std::string bytes_min_, bytes_max_;
};

}  // namespace trialdb::parquet
