// Metadata of a value blob: tensor_dtype, tensor_shape, tensor_ndim, tensor_numel, tensor_bytes.
// These read only the header (tensor_bytes also the data) and work for every dtype.
//
// Examples (tests/sqlext/test_doc_examples.py runs them on the fixture trial pt_bad_init):
//   sqlite> SELECT tensor_dtype(v), tensor_shape(v), tensor_ndim(v), tensor_numel(v), hex(tensor_bytes(v))
//      ...>   FROM (SELECT tensor_from_json('[[1, 2, 3], [4, 5, 6]]', 'int16') AS v);
//   int16|[2,3]|2|6|010002000300040005000600
//   sqlite> SELECT tensor_shape(tensor_from_json('3.5')), tensor_numel(tensor_from_json('[[], []]'));
//   []|0
#include "sqlext/tensor_arg.h"

namespace trialdb::sqlext {

namespace {

enum class Meta { DTypeName, Shape, NDim, NumEl, Bytes };

template <Meta kWhat>
void meta(sqlite3_context* ctx, int /*argc*/, sqlite3_value** argv) {
  static constexpr const char* kNames[] = {"tensor_dtype", "tensor_shape", "tensor_ndim", "tensor_numel",
                                           "tensor_bytes"};
  const char* fn = kNames[static_cast<int>(kWhat)];
  guarded(ctx, fn, [&] {
    TensorArg t;
    if (get_tensor(ctx, argv, 0, fn, &t) != kArgOk) return;
    const TensorView& v = t.view;
    switch (kWhat) {
      case Meta::DTypeName: sqlite3_result_text(ctx, dtype_name(v.dtype), -1, SQLITE_STATIC); break;
      case Meta::Shape: result_text(ctx, shape_json(v.dims, v.ndim)); break;
      case Meta::NDim: sqlite3_result_int(ctx, v.ndim); break;
      case Meta::NumEl: sqlite3_result_int64(ctx, v.numel); break;
      case Meta::Bytes:
        // The uncompressed data section: numpy's tobytes() for numeric values.
        sqlite3_result_blob64(ctx, v.data_bytes ? v.data : reinterpret_cast<const uint8_t*>(""), v.data_bytes,
                              SQLITE_TRANSIENT);
        break;
    }
  });
}

}  // namespace

int register_meta_functions(sqlite3* db) {
  int rc = SQLITE_OK;
  auto add = [&](const char* name, void (*f)(sqlite3_context*, int, sqlite3_value**)) {
    if (rc == SQLITE_OK)
      rc = sqlite3_create_function_v2(db, name, 1, kScalarFlags, nullptr, f, nullptr, nullptr, nullptr);
  };
  add("tensor_dtype", meta<Meta::DTypeName>);
  add("tensor_shape", meta<Meta::Shape>);
  add("tensor_ndim", meta<Meta::NDim>);
  add("tensor_numel", meta<Meta::NumEl>);
  add("tensor_bytes", meta<Meta::Bytes>);
  return rc;
}

}  // namespace trialdb::sqlext
