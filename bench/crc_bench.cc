// CRC-32C throughput against memcpy (Google Benchmark), on buffers that fit in L2 and on ones
// that do not. bench/run divides crc32c's bytes/s by memcpy's for the table; memcpy is the
// reference because a CRC that keeps up with memcpy costs an ingester nothing extra. Wall-clock
// time (UseRealTime), since the machine may be shared.
#include <benchmark/benchmark.h>

#include <cstring>
#include <vector>

#include "ingest/format/crc32c.h"

namespace {

std::vector<char> make_buffer(size_t n) {
  std::vector<char> b(n);
  for (size_t i = 0; i < n; ++i) b[i] = static_cast<char>(i * 131 + (i >> 9));
  return b;
}

void BM_Memcpy(benchmark::State& state) {
  size_t n = static_cast<size_t>(state.range(0));
  auto src = make_buffer(n);
  std::vector<char> dst(n);
  for (auto _ : state) {
    std::memcpy(dst.data(), src.data(), n);
    benchmark::DoNotOptimize(dst.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(n));
}

void BM_Crc32c(benchmark::State& state) {
  size_t n = static_cast<size_t>(state.range(0));
  auto src = make_buffer(n);
  for (auto _ : state) benchmark::DoNotOptimize(trialdb::crc32c(src.data(), n));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(n));
  state.SetLabel(trialdb::crc32c_kernel_name());
}

void BM_Crc32cPortable(benchmark::State& state) {
  size_t n = static_cast<size_t>(state.range(0));
  auto src = make_buffer(n);
  for (auto _ : state) benchmark::DoNotOptimize(trialdb::crc32c_portable(src.data(), n));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(n));
}

}  // namespace

BENCHMARK(BM_Memcpy)->Arg(256 << 10)->Arg(64 << 20)->UseRealTime();
BENCHMARK(BM_Crc32c)->Arg(256 << 10)->Arg(64 << 20)->UseRealTime();
BENCHMARK(BM_Crc32cPortable)->Arg(256 << 10)->Arg(64 << 20)->UseRealTime();
BENCHMARK_MAIN();
