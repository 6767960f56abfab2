// Aggregates over rows of blobs, usable with GROUP BY and as window functions:
//   tensor_sum(v)     elementwise sum of equal-shape tensors -> float64 blob of that shape
//   tensor_concat(v)  concatenation along axis 0 (0-d values count as shape [1]) -> same dtype
// NULL rows are skipped; no rows gives NULL. As window functions they support sliding frames
// (xInverse subtracts the leaving row / drops the oldest row).
//
// Examples (tests/sqlext/test_doc_examples.py runs them on the fixture trial pt_bad_init):
//   sqlite> WITH t(step, v) AS (VALUES (1, tensor_from_json('[1, 2]')), (2, tensor_from_json('[10, 20]')))
//      ...> SELECT tensor_json(tensor_sum(v)), tensor_json(tensor_concat(v)) FROM t;
//   [11,22]|[1,2,10,20]
//   sqlite> WITH t(step, v) AS (VALUES (1, tensor_from_json('1')), (2, tensor_from_json('2')),
//      ...>                            (3, tensor_from_json('3')))
//      ...> SELECT step, tensor_json(tensor_concat(v) OVER (ORDER BY step ROWS 1 PRECEDING)) FROM t;
//   1|[1]
//   2|[1,2]
//   3|[2,3]
//   sqlite> SELECT tensor_json(tensor_concat(value)) FROM (SELECT value FROM tensor_values
//      ...>  WHERE tensor = 'CrossEntropyLoss_output_0' AND step < 3 ORDER BY step);
//   [13.3297205,17.63393,19.177595]
#include <deque>
#include <memory>

#include "sqlext/tensor_arg.h"

namespace trialdb::sqlext {

namespace {

// The aggregate context holds one pointer to the C++ state, created on the first row.
template <class State>
State* state_of(sqlite3_context* ctx, bool create) {
  auto** slot = static_cast<State**>(sqlite3_aggregate_context(ctx, create ? sizeof(State*) : 0));
  if (!slot) return nullptr;
  if (!*slot && create) *slot = new State();
  return *slot;
}
template <class State>
void free_state(sqlite3_context* ctx) {
  auto** slot = static_cast<State**>(sqlite3_aggregate_context(ctx, 0));
  if (slot) {
    delete *slot;
    *slot = nullptr;
  }
}

// ---- tensor_sum ---------------------------------------------------------------------------------

struct SumState {
  bool started = false;
  int ndim = 0;
  int64_t dims[kMaxDims] = {};
  std::vector<double> acc;
  int64_t rows = 0;
};

template <int kSign>
void sum_step(sqlite3_context* ctx, int /*argc*/, sqlite3_value** argv) {
  const char* fn = "tensor_sum";
  guarded(ctx, fn, [&] {
    TensorArg t;
    if (get_tensor(ctx, argv, 0, fn, &t) != kArgOk) return;
    const TensorView& v = t.view;
    if (!require_real(ctx, v, fn, 0)) return;
    SumState* s = state_of<SumState>(ctx, true);
    if (!s) return sqlite3_result_error_nomem(ctx);
    if (kSign > 0 && s->rows == 0) s->started = false;  // a window frame that emptied starts afresh
    if (!s->started) {
      if (v.numel > length_limit(ctx) / 8) return sqlite3_result_error_toobig(ctx);
      s->started = true;
      s->ndim = v.ndim;
      std::copy(v.dims, v.dims + v.ndim, s->dims);
      s->acc.assign(static_cast<size_t>(v.numel), 0.0);
    } else if (v.ndim != s->ndim || !std::equal(v.dims, v.dims + v.ndim, s->dims)) {
      return result_errorf(ctx, "%s: shape %s differs from the first row's %s", fn, shape_json(v.dims, v.ndim).c_str(),
                           shape_json(s->dims, s->ndim).c_str());
    }
    s->rows += kSign;
    double* acc = s->acc.data();
    visit_real(v.dtype, [&](auto loader) {
      for (int64_t i = 0; i < v.numel; ++i) acc[i] += kSign * loader.load(v.data, i);
    });
  });
}

void sum_result(sqlite3_context* ctx, bool final) {
  guarded(ctx, "tensor_sum", [&] {
    SumState* s = state_of<SumState>(ctx, false);
    if (s && s->started && s->rows > 0) {
      ResultBlob out(ctx, DType::Float64, s->dims, s->ndim, s->acc.size() * 8);
      if (out.ok()) {
        if (!s->acc.empty()) std::memcpy(out.data(), s->acc.data(), s->acc.size() * 8);
        out.finish();
      }
    }
  });
  if (final) free_state<SumState>(ctx);
}
void sum_final(sqlite3_context* ctx) { sum_result(ctx, true); }
void sum_value(sqlite3_context* ctx) { sum_result(ctx, false); }

// ---- tensor_concat ------------------------------------------------------------------------------

struct ConcatState {
  bool started = false;
  DType dtype = DType::Float64;
  int inner_ndim = 0;  // dims after axis 0
  int64_t inner[kMaxDims] = {};
  std::string data;  // the rows' data, oldest first, from offset head
  size_t head = 0;
  struct Row {
    size_t bytes;
    int64_t len;
  };
  std::deque<Row> rows;  // for xInverse: what each row contributed
  int64_t len = 0;       // total size of axis 0
};

void concat_step(sqlite3_context* ctx, int /*argc*/, sqlite3_value** argv) {
  const char* fn = "tensor_concat";
  guarded(ctx, fn, [&] {
    TensorArg t;
    if (get_tensor(ctx, argv, 0, fn, &t) != kArgOk) return;
    const TensorView& v = t.view;
    ConcatState* s = state_of<ConcatState>(ctx, true);
    if (!s) return sqlite3_result_error_nomem(ctx);
    if (s->rows.empty()) s->started = false;  // a window frame that emptied starts afresh
    int inner_ndim = v.ndim ? v.ndim - 1 : 0;
    const int64_t* inner = v.ndim ? v.dims + 1 : v.dims;
    int64_t len = v.ndim ? v.dims[0] : 1;
    if (!s->started) {
      s->started = true;
      s->dtype = v.dtype;
      s->inner_ndim = inner_ndim;
      std::copy(inner, inner + inner_ndim, s->inner);
    } else if (v.dtype != s->dtype) {
      return result_errorf(ctx, "%s: dtype %s differs from the first row's %s", fn, dtype_name(v.dtype),
                           dtype_name(s->dtype));
    } else if (inner_ndim != s->inner_ndim || !std::equal(inner, inner + inner_ndim, s->inner)) {
      return result_errorf(ctx, "%s: shape %s does not match the first row's trailing dimensions %s", fn,
                           shape_json(v.dims, v.ndim).c_str(), shape_json(s->inner, s->inner_ndim).c_str());
    }
    if (static_cast<int64_t>(s->data.size() - s->head + v.data_bytes) > length_limit(ctx))
      return sqlite3_result_error_toobig(ctx);
    int64_t total;
    if (__builtin_add_overflow(s->len, len, &total)) return result_errorf(ctx, "%s: the result shape overflows", fn);
    s->data.append(reinterpret_cast<const char*>(v.data), v.data_bytes);
    s->rows.push_back({v.data_bytes, len});
    s->len = total;
  });
}

void concat_inverse(sqlite3_context* ctx, int /*argc*/, sqlite3_value** argv) {
  if (sqlite3_value_type(argv[0]) == SQLITE_NULL) return;  // xStep skipped it too
  ConcatState* s = state_of<ConcatState>(ctx, false);
  if (!s || s->rows.empty()) return;
  s->head += s->rows.front().bytes;
  s->len -= s->rows.front().len;
  s->rows.pop_front();
  if (s->head > s->data.size() / 2) {  // reclaim the dropped prefix now and then
    s->data.erase(0, s->head);
    s->head = 0;
  }
}

void concat_result(sqlite3_context* ctx, bool final) {
  guarded(ctx, "tensor_concat", [&] {
    ConcatState* s = state_of<ConcatState>(ctx, false);
    if (s && s->started && !s->rows.empty()) {
      int64_t dims[kMaxDims];
      int ndim = s->inner_ndim + 1;
      if (ndim > kMaxDims) return result_errorf(ctx, "tensor_concat: more than %d dimensions", kMaxDims);
      dims[0] = s->len;
      std::copy(s->inner, s->inner + s->inner_ndim, dims + 1);
      if (shape_numel(dims, ndim) < 0) return result_errorf(ctx, "tensor_concat: the result shape overflows");
      size_t bytes = s->data.size() - s->head;
      ResultBlob out(ctx, s->dtype, dims, ndim, bytes);
      if (out.ok()) {
        if (bytes) std::memcpy(out.data(), s->data.data() + s->head, bytes);
        out.finish();
      }
    }
  });
  if (final) free_state<ConcatState>(ctx);
}
void concat_final(sqlite3_context* ctx) { concat_result(ctx, true); }
void concat_value(sqlite3_context* ctx) { concat_result(ctx, false); }

}  // namespace

int register_aggregate_functions(sqlite3* db) {
  constexpr int kFlags = SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS;
  int rc = sqlite3_create_window_function(db, "tensor_sum", 1, kFlags, nullptr, sum_step<1>, sum_final, sum_value,
                                          sum_step<-1>, nullptr);
  if (rc == SQLITE_OK)
    rc = sqlite3_create_window_function(db, "tensor_concat", 1, kFlags, nullptr, concat_step, concat_final,
                                        concat_value, concat_inverse, nullptr);
  return rc;
}

}  // namespace trialdb::sqlext
