// A raw value's distribution, computed once at ingest and read back through the distributions
// and histogram_buckets views (docs/SQL.md): exact counts by class of element, numpy's
// percentiles and the sparse histogram on the global bucket grid (bucket_grid.h).
//
// Percentiles are exact: numpy.nanpercentile with its default linear method, over the elements
// as float64. They are found without sorting the whole value: a counting pass puts every element
// in its bucket (which also gives the counts and the histogram), then only the elements of the
// buckets that hold a wanted order statistic are gathered and selected among (nth_element). The
// gathered elements are at most the value's own size, and usually a few hundred. Small values
// are sorted by bucket instead (sorted_elements.h), and selected among within a bucket likewise.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "kernels/reductions.h"
#include "schema/value_blob.h"

namespace trialdb {

inline constexpr int kDistributionPercentiles = 11;
inline constexpr double kDistributionPercents[kDistributionPercentiles] = {0, 1, 5, 10, 25, 50, 75, 90, 95, 99, 100};

// Counts are kept in 32 bits per bucket: larger values get no distribution (a float32 tensor of
// 16 GiB; no SQLite value can hold one).
inline constexpr int64_t kMaxDistributionElements = INT64_C(0xFFFFFFFF);

struct Distribution {
  int64_t nan = 0, pos_inf = 0, neg_inf = 0, zero = 0;
  int64_t negative = 0, positive = 0;           // finite and non-zero
  double percentile[kDistributionPercentiles];  // NaN where numpy's is NaN
  std::string histogram;                        // its histogram blob (schema/histogram_blob.h)
  int64_t count() const { return nan + pos_inf + neg_inf + zero + negative + positive; }
};

// False for dtypes without an order (strings, complex) and values over kMaxDistributionElements.
bool compute_distribution(const TensorView& v, Distribution* out);

// compute_reductions (reductions.h) and compute_distribution of v, in one pass over a large
// float32 value. reductions is null where they are not wanted (a large float32 value's pass
// computes them all the same). *has_reductions and the return value say which v has.
bool compute_reductions_and_distribution(const TensorView& v, Reductions* reductions, bool* has_reductions,
                                         Distribution* out);

// Exact percentiles of v's non-NaN elements (numpy.nanpercentile on them as float64) for each
// p in ps[0, count), all in one counting and one selection pass. Returns v's number of NaN
// elements, or -1 for dtypes without an order and values over kMaxDistributionElements.
int64_t compute_percentiles(const TensorView& v, const double* ps, size_t count, double* out);

}  // namespace trialdb
