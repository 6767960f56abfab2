// tensor_reduce throughput as a ratio of memcpy of the same bytes, measured in the same run.
//
// For float32 and float64 tensors that fit in cache (256 KiB) and that do not (64 MiB), times
// `SELECT tensor_reduce(?1, name)` through SQLite (the blob bound without a copy, so this is the
// function's own cost: decode + kernel) and tensor_count, against memcpy of the blob's data
// bytes, and prints GB/s and reduce/memcpy; likewise tensor_histogram, tensor_percentile(s). The
// ingest's kernels (compute_reductions, compute_distribution) are shown for reference. Best of
// several repetitions.
#include <sqlite3.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/distribution.h"
#include "kernels/reductions.h"
#include "schema/value_blob.h"
#include "sqlext/register.h"

namespace {

using Clock = std::chrono::steady_clock;

template <class F>
double best_seconds(F f, size_t bytes) {
  // Enough repetitions for ~0.2 s of work, at least 3.
  int reps = std::max<int>(3, static_cast<int>(2e8 / std::max<size_t>(bytes, 1)));
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    auto t0 = Clock::now();
    f();
    best = std::min(best, std::chrono::duration<double>(Clock::now() - t0).count());
  }
  return best;
}

volatile double g_sink;

}  // namespace

int main() {
  sqlite3* db = nullptr;
  sqlite3_open(":memory:", &db);
  trialdb_register_sql_functions(db);
  std::mt19937_64 rng(1);
  std::normal_distribution<double> g(0, 1);

  std::printf("%-8s %-9s %-22s %9s %9s\n", "dtype", "size", "operation", "GB/s", "/memcpy");
  for (trialdb::DType dt : {trialdb::DType::Float32, trialdb::DType::Float64}) {
    for (size_t bytes : {size_t{256} << 10, size_t{64} << 20}) {
      size_t item = trialdb::dtype_size(dt);
      int64_t n = static_cast<int64_t>(bytes / item);
      std::string data(bytes, '\0');
      for (int64_t i = 0; i < n; ++i) {
        double x = g(rng);
        if (dt == trialdb::DType::Float32) {
          float f = static_cast<float>(x);
          std::memcpy(&data[i * 4], &f, 4);
        } else {
          std::memcpy(&data[i * 8], &x, 8);
        }
      }
      int64_t dims[1] = {n};
      std::string blob = trialdb::encode_blob(dt, dims, 1, data.data(), data.size());
      std::vector<char> dst(bytes);

      double t_memcpy = best_seconds(
          [&] {
            std::memcpy(dst.data(), data.data(), bytes);
            g_sink = dst[bytes / 2];
          },
          bytes);
      const char* size_name = bytes < (1u << 20) ? "256KiB" : "64MiB";
      auto row = [&](const char* what, double t) {
        std::printf("%-8s %-9s %-22s %9.2f %9.2f\n", trialdb::dtype_name(dt), size_name, what, bytes / t / 1e9,
                    t_memcpy / t);
      };
      row("memcpy", t_memcpy);

      auto sql_time = [&](const std::string& sql) {
        sqlite3_stmt* st = nullptr;
        sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr);
        sqlite3_bind_blob(st, 1, blob.data(), static_cast<int>(blob.size()), SQLITE_STATIC);
        double t = best_seconds(
            [&] {
              if (sqlite3_step(st) != SQLITE_ROW) std::fprintf(stderr, "%s: %s\n", sql.c_str(), sqlite3_errmsg(db));
              g_sink = sqlite3_column_double(st, 0);
              sqlite3_reset(st);
            },
            bytes);
        sqlite3_finalize(st);
        return t;
      };
      for (const char* red : {"sum", "mean", "min", "max", "l1", "l2", "std", "variance", "prod"}) {
        std::string label = std::string("tensor_reduce ") + red;
        row(label.c_str(), sql_time(std::string("SELECT tensor_reduce(?1, '") + red + "')"));
      }
      row("tensor_count > 0", sql_time("SELECT tensor_count(?1, '>', 0)"));
      row("tensor_count nan", sql_time("SELECT tensor_count(?1, 'nan')"));
      row("tensor_histogram 50", sql_time("SELECT tensor_histogram(?1, 50, -4, 4) IS NULL"));
      row("tensor_percentile 50", sql_time("SELECT tensor_percentile(?1, 50)"));
      row("tensor_percentiles x11",
          sql_time("SELECT tensor_percentiles(?1, '[0,1,5,10,25,50,75,90,95,99,100]') IS NULL"));
      trialdb::TensorView v;
      std::vector<uint8_t> scratch;
      if (!trialdb::decode_blob(blob.data(), blob.size(), &v, &scratch).is_ok()) std::abort();
      row("compute_reductions(18)", best_seconds(
                                        [&] {
                                          trialdb::Reductions r;
                                          trialdb::compute_reductions(v, &r);
                                          g_sink = r.v[0];
                                        },
                                        bytes));
      row("compute_distribution", best_seconds(
                                      [&] {
                                        trialdb::Distribution d;
                                        trialdb::compute_distribution(v, &d);
                                        g_sink = d.percentile[0];
                                      },
                                      bytes));
    }
  }
  sqlite3_close(db);
  return 0;
}
