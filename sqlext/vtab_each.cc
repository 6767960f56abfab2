// tensor_each(v): a table-valued function yielding one row (idx, value) per element of v in C
// order, so `SELECT ... FROM tensor_values, tensor_each(value)` unnests tensors. idx is the flat
// index; value is what tensor_at(v, idx) gives. An eponymous-only virtual table.
//
// Examples (tests/sqlext/test_doc_examples.py runs them on the fixture trial pt_bad_init):
//   sqlite> SELECT idx, value FROM tensor_each(tensor_from_json('[[1.5, 2], [3, 4]]'));
//   0|1.5
//   1|2.0
//   2|3.0
//   3|4.0
//   sqlite> SELECT count(*) FROM tensor_each(NULL);
//   0
//   sqlite> SELECT count(*), round(min(e.value), 4), round(max(e.value), 4)
//      ...>   FROM tensor_values v, tensor_each(v.value) AS e WHERE v.tensor = 'Net_fc.bias' AND v.step = 0;
//   10|-0.9614|0.9966
#include <memory>

#include "sqlext/json_text.h"
#include "sqlext/table_function.h"
#include "sqlext/tensor_arg.h"

namespace trialdb::sqlext {

namespace {

enum Column { kColIdx = 0, kColValue = 1, kColTensor = 2 };

struct EachCursor {
  sqlite3_vtab_cursor base;   // first: SQLite casts between the two
  std::vector<uint8_t> blob;  // xFilter's argument is only valid during the call: keep a copy
  TensorArg t;
  int64_t i = 0;
  // Strings are variable length: the cursor walks them alongside i.
  std::unique_ptr<StringCursor> strings;
  std::string_view current;
};

void load_string(EachCursor* c) {
  if (c->strings && c->i < c->t.view.numel) c->current = c->strings->next();
}

int each_filter(sqlite3_vtab_cursor* cur, int idx_num, const char*, int argc, sqlite3_value** argv) {
  auto* c = reinterpret_cast<EachCursor*>(cur);
  c->i = 0;
  c->strings.reset();
  c->t.view = TensorView();
  c->t.view.numel = 0;  // no rows unless a tensor is given
  if (idx_num == 0 || argc < 1) {
    cur->pVtab->zErrMsg = sqlite3_mprintf("tensor_each: missing the tensor argument, as in tensor_each(value)");
    return SQLITE_ERROR;
  }
  if (sqlite3_value_type(argv[0]) == SQLITE_NULL) return SQLITE_OK;  // NULL: no rows
  if (sqlite3_value_type(argv[0]) != SQLITE_BLOB) {
    cur->pVtab->zErrMsg = sqlite3_mprintf("tensor_each: argument 1 is not a value blob");
    return SQLITE_ERROR;
  }
  try {
    const auto* p = static_cast<const uint8_t*>(sqlite3_value_blob(argv[0]));
    c->blob.assign(p, p + sqlite3_value_bytes(argv[0]));
    if (const Status st = decode_checked(c->blob.data(), c->blob.size(), &c->t, kMaxInflatedBytes); !st.is_ok()) {
      cur->pVtab->zErrMsg = sqlite3_mprintf("tensor_each: argument 1: %s", st.cause().c_str());
      c->t.view = TensorView();
      c->t.view.numel = 0;
      return SQLITE_ERROR;
    }
  } catch (const std::bad_alloc&) {
    return SQLITE_NOMEM;
  }
  if (c->t.view.dtype == DType::String) {
    c->strings = std::make_unique<StringCursor>(c->t.view);
    load_string(c);
  }
  return SQLITE_OK;
}

int each_next(sqlite3_vtab_cursor* cur) {
  auto* c = reinterpret_cast<EachCursor*>(cur);
  ++c->i;
  load_string(c);
  return SQLITE_OK;
}

int each_eof(sqlite3_vtab_cursor* cur) {
  auto* c = reinterpret_cast<EachCursor*>(cur);
  return c->i >= c->t.view.numel;
}

int each_column(sqlite3_vtab_cursor* cur, sqlite3_context* ctx, int col) {
  auto* c = reinterpret_cast<EachCursor*>(cur);
  switch (col) {
    case kColIdx: sqlite3_result_int64(ctx, c->i); break;
    case kColValue:
      if (c->strings) sqlite3_result_text64(ctx, c->current.data(), c->current.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
      else result_element(ctx, c->t.view, c->i);
      break;
    default: sqlite3_result_blob(ctx, c->blob.data(), static_cast<int>(c->blob.size()), SQLITE_TRANSIENT); break;
  }
  return SQLITE_OK;
}

int each_rowid(sqlite3_vtab_cursor* cur, sqlite3_int64* rowid) {
  *rowid = reinterpret_cast<EachCursor*>(cur)->i;
  return SQLITE_OK;
}

struct Each {
  static constexpr const char* kDeclaration = "CREATE TABLE x(idx INTEGER, value, tensor HIDDEN)";
  static constexpr int kArgumentColumn = kColTensor;
  static constexpr int kArgumentCount = 1;
  static constexpr int kOrderColumn = kColIdx;
  static constexpr double kCost = 1000;
  using Cursor = EachCursor;
  static constexpr auto filter = each_filter;
  static constexpr auto next = each_next;
  static constexpr auto eof = each_eof;
  static constexpr auto column = each_column;
  static constexpr auto rowid = each_rowid;
};

const sqlite3_module kEachModule = table_function_module<Each>();

}  // namespace

int register_each_module(sqlite3* db) { return sqlite3_create_module(db, "tensor_each", &kEachModule, nullptr); }

}  // namespace trialdb::sqlext
