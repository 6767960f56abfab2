// Shared plumbing of the SQL functions: decoding and validating value-blob arguments, reading
// scalar arguments, building result blobs, and reporting errors that name the function and the
// argument. Every function goes through these so malformed input is an SQL error, never a crash.
#pragma once
#include <cstdint>
#include <cstring>
#include <exception>
#include <new>
#include <string>
#include <vector>

#include "kernels/element_loader.h"
#include "schema/value_blob.h"
#include "sqlext/sqlite_api.h"

namespace trialdb::sqlext {

// A decoded argument; scratch holds the inflated data of a compressed blob.
struct TensorArg {
  TensorView view;
  std::vector<uint8_t> scratch;
};

// decode_blob with what sqlext adds: a compressed blob may not inflate past
// max_inflated_bytes (the connection's SQLITE_LIMIT_LENGTH: nothing larger could be a value
// there), and allocation failure is an error, not an exception. kInvalidInput saying what is
// wrong with the blob.
Status decode_checked(const void* blob, size_t size, TensorArg* out, uint64_t max_inflated_bytes);

// What became of one argument of an SQL function. Not a Status: inside an SQL function an error
// is not returned but reported to SQLite, which then fails the statement with that message.
// kArgError therefore means "already reported with sqlite3_result_error (result_errorf), naming
// the function and the argument: return at once"; kArgNull means the argument is SQL NULL and
// the function's result is NULL (nothing reported).
enum ArgStatus { kArgOk, kArgNull, kArgError };

// Decodes argument argno (0-based) of fn. kArgNull: the argument is SQL NULL (the caller
// returns NULL); kArgError: an error naming fn and the argument has been reported on ctx.
ArgStatus get_tensor(sqlite3_context* ctx, sqlite3_value** argv, int argno, const char* fn, TensorArg* out);

// printf-style SQL error: "<fn>: <message>".
void result_errorf(sqlite3_context* ctx, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

// Numeric argument as double / int64: false (error set) when it is NULL or not a number.
bool get_double(sqlite3_context* ctx, sqlite3_value** argv, int argno, const char* fn, const char* what, double* out);
bool get_int(sqlite3_context* ctx, sqlite3_value** argv, int argno, const char* fn, const char* what, int64_t* out);
// Text argument; false (error set) when it is not text.
bool get_text(sqlite3_context* ctx, sqlite3_value** argv, int argno, const char* fn, const char* what,
              std::string* out);

// An error unless the tensor holds real numbers (not strings or complex).
bool require_real(sqlite3_context* ctx, const TensorView& v, const char* fn, int argno);

// Result blob of the given dtype and shape, allocated with sqlite3_malloc64 so SQLite takes it
// without a copy. data() is where the caller writes exactly data_bytes bytes; finish() hands
// it to SQLite. Too large for SQLITE_LIMIT_LENGTH or out of memory: ok() is false, error set.
class ResultBlob {
 public:
  ResultBlob(sqlite3_context* ctx, DType dtype, const int64_t* dims, int ndim, size_t data_bytes);
  ~ResultBlob();
  ResultBlob(const ResultBlob&) = delete;
  ResultBlob& operator=(const ResultBlob&) = delete;
  bool ok() const { return blob_ != nullptr; }
  uint8_t* data() { return blob_ + header_; }
  void finish();

 private:
  sqlite3_context* ctx_;
  uint8_t* blob_ = nullptr;
  size_t header_ = 0, size_ = 0;
};

// Text result (JSON) with a length-limit check.
void result_text(sqlite3_context* ctx, const std::string& s);

// The connection's SQLITE_LIMIT_LENGTH: the largest blob or string a result may be.
int64_t length_limit(sqlite3_context* ctx);

// Runs body, turning C++ exceptions into SQL errors (out of memory, or the message).
template <class Body>
void guarded(sqlite3_context* ctx, const char* fn, Body&& body) {
  try {
    body();
  } catch (const std::bad_alloc&) {
    sqlite3_result_error_nomem(ctx);
  } catch (const std::exception& e) {
    result_errorf(ctx, "%s: %s", fn, e.what());
  }
}

// Element i (< numel) as an SQL value: integer for bool/int dtypes (uint64 beyond int64 as
// real), real for floats (NaN becomes NULL), text for strings, "[re,im]" JSON for complex.
void result_element(sqlite3_context* ctx, const TensorView& v, int64_t i);

// All elements of a real tensor as doubles (C order).
std::vector<double> to_doubles(const TensorView& v);

bool dtype_is_integer(DType t);  // bool and the int/uint types

// Registration hooks, one per source file (register.cc calls them all).
int register_meta_functions(sqlite3* db);
int register_reduce_functions(sqlite3* db);
int register_count_functions(sqlite3* db);
int register_stats_functions(sqlite3* db);
int register_distribution_functions(sqlite3* db);
int register_compare_functions(sqlite3* db);
int register_elementwise_functions(sqlite3* db);
int register_json_functions(sqlite3* db);
int register_aggregate_functions(sqlite3* db);
int register_each_module(sqlite3* db);
int register_regexp_function(sqlite3* db);
int register_rule_functions(sqlite3* db);       // fn_rule.cc: the rule_* helpers of the rule views
int register_label_pairs_module(sqlite3* db);   // vtab_label_pairs.cc: rule_label_pairs
int register_histogram_functions(sqlite3* db);  // fn_histogram.cc: the histogram views' histogram_*

// Flags every scalar function is registered with.
inline constexpr int kScalarFlags = SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS;

}  // namespace trialdb::sqlext
