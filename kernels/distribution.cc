// compute_distribution, compute_reductions_and_distribution and compute_percentiles
// (distribution.h): each value is counted by the counter that suits it (float32_key_counter.h
// for large float32 values, counted in the reductions' pass where both are wanted;
// bucket_counter.h for the rest), then its counts and histogram are read off the counter and its
// percentiles selected (rank_selection.h).
#include "kernels/distribution.h"

#include <memory>
#include <mutex>
#include <vector>

#include "kernels/bucket_counter.h"
#include "kernels/bucket_runs.h"
#include "kernels/element_loader.h"
#include "kernels/float32_key_counter.h"
#include "kernels/rank_selection.h"

namespace trialdb {

namespace {

using distribution_kernel::BucketCounter;
using distribution_kernel::DistributionCounter;
using distribution_kernel::Float32KeyCounter;

// Counters kept between values and between threads. A counter is megabytes of zeroed tables
// (2.5 MB for BucketCounter) and the ingest prepares each file on a thread of its own: made anew
// per thread, zeroing them was 16% of the CPU of ingesting the CNN profile (1,000 files). A
// thread leases one from the process's pool when it first needs it and gives it back when it
// ends; a counter is clean between values (with_counted clears it), so the next thread takes it
// as it is. The pool holds at most as many as ever ran at once.
template <class Counter>
class CounterPool {
 public:
  std::unique_ptr<Counter> take() {
    std::lock_guard lock(mutex_);
    if (free_.empty()) return std::make_unique<Counter>();
    std::unique_ptr<Counter> c = std::move(free_.back());
    free_.pop_back();
    return c;
  }
  void give(std::unique_ptr<Counter> c) {
    std::lock_guard lock(mutex_);
    free_.push_back(std::move(c));
  }

 private:
  std::mutex mutex_;
  std::vector<std::unique_ptr<Counter>> free_;
};

template <class Counter>
Counter& thread_counter() {
  static auto* const pool = new CounterPool<Counter>;  // never destroyed: threads may outlive main
  struct Lease {
    std::unique_ptr<Counter> counter = pool->take();
    ~Lease() { pool->give(std::move(counter)); }
  };
  thread_local Lease lease;
  return *lease.counter;
}
BucketCounter& thread_bucket_counter() { return thread_counter<BucketCounter>(); }
Float32KeyCounter& thread_key_counter() { return thread_counter<Float32KeyCounter>(); }

// Clears a counter when the value's work is done, also when it throws: a counter goes on to
// the thread's next value or to another thread.
template <class Counter>
struct ClearAfter {
  Counter& counter;
  ~ClearAfter() { counter.clear(); }
};

// Whether v is counted by the key counter (else by the bucket counter).
bool uses_key_counter(const TensorView& v) {
  return v.dtype == DType::Float32 && v.numel >= Float32KeyCounter::kMinElements && v.numel <= kMaxDistributionElements;
}

// How a value comes to with_counted: to be counted, or counted by the thread's key counter
// already (in the reductions' pass), or declined by it.
enum class Keys { kCount, kCounted, kDeclined };

// Counts v with the counter that suits it and calls f(counter, load), then clears the counter.
// False for dtypes without an order and values over kMaxDistributionElements.
template <class F>
bool with_counted(const TensorView& v, F&& f, Keys keys = Keys::kCount) {
  if (!dtype_is_real(v.dtype) || v.numel > kMaxDistributionElements) return false;
  return distribution_kernel::with_loader(v, [&](auto load) {
    if (uses_key_counter(v) && keys != Keys::kDeclined) {
      Float32KeyCounter& counter = thread_key_counter();
      if (keys == Keys::kCounted || counter.count(v)) {
        ClearAfter<Float32KeyCounter> clear{counter};
        f(counter, load);
        return;
      }
    }
    BucketCounter& buckets = thread_bucket_counter();
    ClearAfter<BucketCounter> clear{buckets};
    buckets.count(v, load);
    f(buckets, load);
  });
}

// Every bucket of the counted value in value order: f(bucket, count) for the non-empty ones.
template <DistributionCounter Counter, class F>
void for_each_bucket(const Counter& c, F&& f) {
  for (int64_t s = c.hi(); s >= c.lo(); --s)
    if (const int64_t n = c.at(1, s)) f(-s, n);
  if (c.zero()) f(int64_t{0}, c.zero());
  for (int64_t s = c.lo(); s <= c.hi(); ++s)
    if (const int64_t n = c.at(0, s)) f(s, n);
}

// The distribution of the value counted by c.
template <DistributionCounter Counter, class Load>
void fill_distribution(Counter& c, const TensorView& v, Load load, Distribution* out) {
  out->nan = c.nan();
  out->zero = c.zero();
  out->pos_inf = c.inf(0);
  out->neg_inf = c.inf(1);
  out->negative = out->positive = 0;
  BucketRunWriter runs;
  for_each_bucket(c, [&](int64_t bucket, int64_t count) {
    if (bucket < 0) out->negative += count;
    if (bucket > 0) out->positive += count;
    runs.add(bucket, static_cast<uint64_t>(count));
  });
  out->histogram = runs.finish();
  distribution_kernel::percentiles_of(c, v, load, kDistributionPercents, kDistributionPercentiles, out->percentile);
}

}  // namespace

bool compute_distribution(const TensorView& v, Distribution* out) {
  return with_counted(v, [&](auto& c, auto load) { fill_distribution(c, v, load, out); });
}

bool compute_reductions_and_distribution(const TensorView& v, Reductions* reductions, bool* has_reductions,
                                         Distribution* out) {
  Keys keys = Keys::kCount;
  if (uses_key_counter(v)) {
    Reductions unwanted;
    *has_reductions = reductions != nullptr;
    const bool counted = count_keys_with_reductions(v, reductions ? reductions : &unwanted, &thread_key_counter());
    keys = counted ? Keys::kCounted : Keys::kDeclined;
  } else {
    *has_reductions = reductions && compute_reductions(v, reductions);
  }
  return with_counted(
      v, [&](auto& c, auto load) { fill_distribution(c, v, load, out); }, keys);
}

int64_t compute_percentiles(const TensorView& v, const double* ps, size_t count, double* out) {
  int64_t nan = -1;
  if (!with_counted(v, [&](auto& c, auto load) {
        nan = c.nan();
        distribution_kernel::percentiles_of(c, v, load, ps, count, out);
      }))
    return -1;
  return nan;
}

}  // namespace trialdb
