// The one histogram grid every distribution is counted on (docs/SQL.md, "histogram_buckets").
//
// The grid is fixed and global, HDR-histogram style: a bucket is the sign, the binary exponent
// and the top kBucketMantissaBits bits of the mantissa of a value as a float64, so each octave
// [2^e, 2^(e+1)] is cut into 128 equal buckets and a bucket's width is at most 2^-7 (0.78%) of
// its smaller edge, for every magnitude from the smallest normal float64 up. Because every value
// of every trial uses the same edges, merging workers, steps or trials is adding counts of equal
// buckets, and any quantile of a merge is found to within that width.
//
// Buckets are numbered by a signed index that orders them as their values: 0 holds the zeros
// (0.0 and -0.0), k > 0 the positive values lo < x <= hi, -k the negative values -hi <= x < -lo
// of the same magnitudes. The magnitude edges are float64 bit patterns: (k - 1) << 45 and
// k << 45, so the edges are exact and the index of x is an integer operation on its bits.
#pragma once
#include <cstdint>
#include <cstring>

namespace trialdb {

inline constexpr int kBucketMantissaBits = 7;
inline constexpr int kBucketShift = 52 - kBucketMantissaBits;
inline constexpr uint64_t kMagnitudeMask = 0x7FFF'FFFF'FFFF'FFFFull;
inline constexpr uint64_t kInfinityBits = 0x7FF0'0000'0000'0000ull;
// The largest magnitude bucket: its upper edge is +Inf (the largest finite doubles are in it).
inline constexpr int64_t kMaxBucket = static_cast<int64_t>((kInfinityBits - 1) >> kBucketShift) + 1;

inline uint64_t double_bits(double x) {
  uint64_t b;
  std::memcpy(&b, &x, sizeof b);
  return b;
}
inline double bits_double(uint64_t b) {
  double x;
  std::memcpy(&x, &b, sizeof x);
  return x;
}

// The bucket of a finite x.
inline int64_t bucket_of(double x) {
  const uint64_t bits = double_bits(x), mag = bits & kMagnitudeMask;
  const int64_t k = mag == 0 ? 0 : static_cast<int64_t>((mag - 1) >> kBucketShift) + 1;
  return (bits >> 63) ? -k : k;
}

// The octave of bucket k (the float64 biased exponent of its magnitudes; subnormals in 0), -1
// for the zero bucket.
inline int64_t bucket_octave(int64_t k) { return k == 0 ? -1 : ((k < 0 ? -k : k) - 1) >> kBucketMantissaBits; }

// Magnitude edges of bucket k in [1, kMaxBucket]: lo < |x| <= hi.
inline double bucket_magnitude_lo(int64_t k) { return bits_double(static_cast<uint64_t>(k - 1) << kBucketShift); }
inline double bucket_magnitude_hi(int64_t k) { return bits_double(static_cast<uint64_t>(k) << kBucketShift); }

// Signed edges: lo < x <= hi for k > 0, lo <= x < hi for k < 0, lo = hi = 0 for k = 0.
inline double bucket_lo(int64_t k) { return k > 0 ? bucket_magnitude_lo(k) : k < 0 ? -bucket_magnitude_hi(-k) : 0.0; }
inline double bucket_hi(int64_t k) { return k > 0 ? bucket_magnitude_hi(k) : k < 0 ? -bucket_magnitude_lo(-k) : 0.0; }

}  // namespace trialdb
