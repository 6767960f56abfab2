// SortedElements' sort by bucket and its selection of order statistics (sorted_elements.h).
#include "kernels/sorted_elements.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <utility>

#include "kernels/bucket_grid.h"
#include "kernels/rank_selection.h"

namespace trialdb::distribution_kernel {

namespace {
// Below this many keys, summing the digits' counts costs more than std::sort does.
constexpr size_t kMinRadixKeys = 64;
constexpr int kDigitBits = 8;
constexpr size_t kDigitValues = size_t{1} << kDigitBits;
// Ranks selected in one bucket at once.
constexpr size_t kSelectBatch = 32;
}  // namespace

void SortedElements::sort_finite() {
  const size_t n = finite_;
  uint32_t* src = keys_.data();
  uint32_t counts[2][kDigitValues] = {};
  for (size_t i = 0; i < n; ++i) {
    const uint32_t b = bucket_key(src[i]);
    ++counts[0][b & 0xFF];
    ++counts[1][b >> kDigitBits];
  }
  negative_ = 0;
  for (size_t d = 0; d < kPositiveBucketKeys >> kDigitBits; ++d) negative_ += counts[1][d];
  whole_keys_sorted_ = n < kMinRadixKeys;
  if (whole_keys_sorted_) {
    std::sort(src, src + n);  // by the whole key, hence by bucket
  } else {
    if (scratch_.size() < n) scratch_.resize(n);
    uint32_t* dst = scratch_.data();
    for (int d = 0; d < 2; ++d) {
      const int shift = d * kDigitBits;
      uint32_t* const c = counts[d];
      if (c[(bucket_key(src[0]) >> shift) & 0xFF] == n) continue;  // one digit for all: nothing to move
      uint32_t at = 0;
      for (size_t b = 0; b < kDigitValues; ++b) at += std::exchange(c[b], at);
      const int key_shift = kBucketKeyShift + shift;
      for (size_t i = 0; i < n; ++i) dst[c[(src[i] >> key_shift) & 0xFF]++] = src[i];
      std::swap(src, dst);
    }
  }
  sorted_ = src;
}

void SortedElements::select(const int64_t* ranks, size_t count, double* values) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  const int64_t n = static_cast<int64_t>(finite_);
  // Ranks in order: -Inf, the negatives (sorted_[0, negative_)), the zeros, the positives
  // (sorted_[negative_, n)), +Inf. where(rank) is the rank's place in sorted_, or -1 with its
  // value in *special.
  auto where = [&](int64_t r, double* special) -> int64_t {
    if (r < inf_[1]) return *special = -kInf, -1;
    r -= inf_[1];
    if (r < negative_) return r;
    if (r < negative_ + zero_) return *special = 0.0, -1;
    if (r < n + zero_) return r - zero_;
    return *special = kInf, -1;
  };
  auto value = [](uint32_t key) { return static_cast<double>(std::bit_cast<float>(key_bits(key))); };
  int64_t positions[kSelectBatch];
  for (size_t i = 0; i < count;) {
    double special = 0;
    const int64_t at = where(ranks[i], &special);
    if (at < 0) {
      values[i++] = special;
      continue;
    }
    if (whole_keys_sorted_) {  // each element is at its rank already
      values[i++] = value(sorted_[at]);
      continue;
    }
    // Select the ranks that fall in this element's bucket within the bucket alone.
    const uint32_t key = bucket_key(sorted_[at]);
    uint32_t* const begin =
        std::partition_point(sorted_, sorted_ + at, [&](uint32_t k) { return bucket_key(k) < key; });
    uint32_t* const end =
        std::partition_point(sorted_ + at, sorted_ + n, [&](uint32_t k) { return bucket_key(k) == key; });
    size_t k = 0, j = i;
    for (int64_t p = at; j < count && k < kSelectBatch && p >= 0 && sorted_ + p < end;
         p = ++j < count ? where(ranks[j], &special) : -1)
      positions[k++] = p;
    multi_select(begin, end, sorted_, positions, k);
    for (size_t q = 0; q < k; ++q) values[i + q] = value(sorted_[positions[q]]);
    i = j;
  }
}

}  // namespace trialdb::distribution_kernel
