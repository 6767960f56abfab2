// Column-chunk statistics (statistics.h).
#include "parquet/statistics.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "parquet/plain.h"

namespace trialdb::parquet {

void ColumnStatistics::add(int64_t v) {
  if (!has_bounds_) {
    int_min_ = int_max_ = v;
    has_bounds_ = true;
    return;
  }
  if (v < int_min_) int_min_ = v;
  if (v > int_max_) int_max_ = v;
}

void ColumnStatistics::add(double v) {
  if (std::isnan(v)) return;
  if (!has_bounds_) {
    real_min_ = real_max_ = v;
    has_bounds_ = true;
    return;
  }
  if (v < real_min_) real_min_ = v;
  if (v > real_max_) real_max_ = v;
}

void ColumnStatistics::add_values(std::span<const int64_t> values) {
  if (values.empty()) return;
  int64_t lo = values[0], hi = values[0];
  for (const int64_t v : values) {
    lo = v < lo ? v : lo;
    hi = v > hi ? v : hi;
  }
  add(lo);
  add(hi);
}

void ColumnStatistics::add_values(std::span<const double> values) {
  // The first of equal values wins, as in add(): only strictly smaller (larger) ones replace it.
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  bool any = false;
  for (const double v : values) {
    if (std::isnan(v)) continue;
    lo = v < lo ? v : lo;
    hi = v > hi ? v : hi;
    any = true;
  }
  if (!any) return;
  add(lo);
  add(hi);
}

void ColumnStatistics::add(std::string_view v) {
  if (bounds_dropped_) return;
  if (v.size() > kMaxStatisticsBytes) {
    bounds_dropped_ = true;
    has_bounds_ = false;
    return;
  }
  if (!has_bounds_) {
    bytes_min_ = bytes_max_ = v;
    has_bounds_ = true;
    return;
  }
  // std::string compares with char_traits<char>::compare, which is memcmp: unsigned bytes.
  if (v < bytes_min_) bytes_min_ = v;
  if (v > bytes_max_) bytes_max_ = v;
}

format::Statistics ColumnStatistics::to_thrift() const {
  format::Statistics s;
  s.__set_null_count(nulls_);
  if (!has_bounds_) return s;
  std::string lo, hi;
  switch (type_) {
    case ColumnType::kBoolean:
      lo.push_back(static_cast<char>(int_min_));
      hi.push_back(static_cast<char>(int_max_));
      break;
    case ColumnType::kInt64:
      append_plain(lo, int_min_);
      append_plain(hi, int_max_);
      break;
    case ColumnType::kDouble:
      append_plain(lo, real_min_ == 0 ? -0.0 : real_min_);
      append_plain(hi, real_max_ == 0 ? +0.0 : real_max_);
      break;
    case ColumnType::kString:
    case ColumnType::kBytes:
      lo = bytes_min_;
      hi = bytes_max_;
      break;
  }
  s.__set_min_value(lo);
  s.__set_max_value(hi);
  return s;
}

}  // namespace trialdb::parquet
