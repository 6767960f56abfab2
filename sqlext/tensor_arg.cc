// The plumbing every SQL function goes through: decoding and validating value-blob arguments
// (a compressed blob may not inflate past the connection's length limit), reading scalar
// arguments, building result blobs, and errors that name the function and the argument, so
// malformed input is an SQL error, never a crash.
//
// Examples (tests/sqlext/test_doc_examples.py runs them on the fixture trial pt_bad_init):
//   sqlite> SELECT tensor_numel(NULL) IS NULL, tensor_dtype(tensor_from_json('[1, 2]', 'bfloat16'));
//   1|bfloat16
//   sqlite> SELECT tensor_numel(tensor_from_json('[[1, 2], [3, 4]]', 'float16'));
//   4
#include "sqlext/tensor_arg.h"

#include <cmath>
#include <cstdarg>
#include <limits>

namespace trialdb::sqlext {

namespace {
const char* type_name(int t) {
  switch (t) {
    case SQLITE_INTEGER: return "an integer";
    case SQLITE_FLOAT: return "a real";
    case SQLITE_TEXT: return "text";
    case SQLITE_BLOB: return "a blob";
    default: return "NULL";
  }
}

}  // namespace

void result_errorf(sqlite3_context* ctx, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char* msg = sqlite3_vmprintf(fmt, ap);
  va_end(ap);
  if (!msg) {
    sqlite3_result_error_nomem(ctx);
    return;
  }
  sqlite3_result_error(ctx, msg, -1);
  sqlite3_free(msg);
}

Status decode_checked(const void* blob, size_t size, TensorArg* out, uint64_t max_inflated_bytes) {
  try {
    return decode_blob(blob, size, &out->view, &out->scratch, max_inflated_bytes);
  } catch (const std::bad_alloc&) {
    return Status::invalid("compressed value blob too large to inflate");
  }
}

ArgStatus get_tensor(sqlite3_context* ctx, sqlite3_value** argv, int argno, const char* fn, TensorArg* out) {
  int t = sqlite3_value_type(argv[argno]);
  if (t == SQLITE_NULL) return kArgNull;
  if (t != SQLITE_BLOB) {
    result_errorf(ctx, "%s: argument %d is %s, not a value blob", fn, argno + 1, type_name(t));
    return kArgError;
  }
  const void* p = sqlite3_value_blob(argv[argno]);
  size_t n = static_cast<size_t>(sqlite3_value_bytes(argv[argno]));
  const Status st = decode_checked(p, n, out, static_cast<uint64_t>(length_limit(ctx)));
  if (st.is_ok()) return kArgOk;
  result_errorf(ctx, "%s: argument %d: %s", fn, argno + 1, st.cause().c_str());
  return kArgError;
}

bool get_double(sqlite3_context* ctx, sqlite3_value** argv, int argno, const char* fn, const char* what, double* out) {
  int t = sqlite3_value_numeric_type(argv[argno]);
  if (t != SQLITE_INTEGER && t != SQLITE_FLOAT) {
    result_errorf(ctx, "%s: %s (argument %d) must be a number, got %s", fn, what, argno + 1, type_name(t));
    return false;
  }
  *out = sqlite3_value_double(argv[argno]);
  return true;
}

bool get_int(sqlite3_context* ctx, sqlite3_value** argv, int argno, const char* fn, const char* what, int64_t* out) {
  int t = sqlite3_value_numeric_type(argv[argno]);
  if (t == SQLITE_FLOAT) {
    double d = sqlite3_value_double(argv[argno]);
    if (d > -9.2e18 && d < 9.2e18 && d == std::floor(d)) {  // range first: the cast of 1e300 is UB
      *out = static_cast<int64_t>(d);
      return true;
    }
  }
  if (t != SQLITE_INTEGER) {
    result_errorf(ctx, "%s: %s (argument %d) must be an integer, got %s", fn, what, argno + 1, type_name(t));
    return false;
  }
  *out = sqlite3_value_int64(argv[argno]);
  return true;
}

bool get_text(sqlite3_context* ctx, sqlite3_value** argv, int argno, const char* fn, const char* what,
              std::string* out) {
  int t = sqlite3_value_type(argv[argno]);
  if (t != SQLITE_TEXT) {
    result_errorf(ctx, "%s: %s (argument %d) must be text, got %s", fn, what, argno + 1, type_name(t));
    return false;
  }
  const unsigned char* s = sqlite3_value_text(argv[argno]);
  if (!s) {
    sqlite3_result_error_nomem(ctx);
    return false;
  }
  out->assign(reinterpret_cast<const char*>(s), static_cast<size_t>(sqlite3_value_bytes(argv[argno])));
  return true;
}

bool require_real(sqlite3_context* ctx, const TensorView& v, const char* fn, int argno) {
  if (dtype_is_real(v.dtype)) return true;
  result_errorf(ctx, "%s: argument %d has dtype %s; this function needs real numbers", fn, argno + 1,
                dtype_name(v.dtype));
  return false;
}

int64_t length_limit(sqlite3_context* ctx) {
  return sqlite3_limit(sqlite3_context_db_handle(ctx), SQLITE_LIMIT_LENGTH, -1);
}

ResultBlob::ResultBlob(sqlite3_context* ctx, DType dtype, const int64_t* dims, int ndim, size_t data_bytes)
    : ctx_(ctx) {
  header_ = kBlobHeaderFixed + 8 * static_cast<size_t>(ndim);
  if (ndim > kMaxDims || data_bytes > static_cast<size_t>(length_limit(ctx)) ||
      header_ + data_bytes > static_cast<size_t>(length_limit(ctx))) {
    sqlite3_result_error_toobig(ctx);
    return;
  }
  size_ = header_ + data_bytes;
  blob_ = static_cast<uint8_t*>(sqlite3_malloc64(size_ ? size_ : 1));
  if (!blob_) {
    sqlite3_result_error_nomem(ctx);
    return;
  }
  blob_[0] = kBlobMagic;
  blob_[1] = static_cast<uint8_t>(dtype);
  blob_[2] = static_cast<uint8_t>(ndim);
  blob_[3] = 0;
  for (int i = 0; i < ndim; ++i) {
    uint64_t d = static_cast<uint64_t>(dims[i]);
    std::memcpy(blob_ + 4 + 8 * i, &d, 8);
  }
}

ResultBlob::~ResultBlob() { sqlite3_free(blob_); }

void ResultBlob::finish() {
  sqlite3_result_blob64(ctx_, blob_, size_, sqlite3_free);
  blob_ = nullptr;
}

void result_text(sqlite3_context* ctx, const std::string& s) {
  if (static_cast<int64_t>(s.size()) > length_limit(ctx)) {
    sqlite3_result_error_toobig(ctx);
    return;
  }
  sqlite3_result_text64(ctx, s.data(), s.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
}

std::vector<double> to_doubles(const TensorView& v) {
  std::vector<double> out(static_cast<size_t>(v.numel));
  visit_real(v.dtype, [&](auto loader) {
    for (int64_t i = 0; i < v.numel; ++i) out[i] = loader.load(v.data, i);
  });
  return out;
}

bool dtype_is_integer(DType t) {
  return t == DType::Bool || t == DType::Int8 || t == DType::UInt8 || t == DType::Int16 || t == DType::UInt16 ||
         t == DType::Int32 || t == DType::UInt32 || t == DType::Int64 || t == DType::UInt64;
}

}  // namespace trialdb::sqlext
