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
#include <new>

#include "sqlext/json_text.h"
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

int each_connect(sqlite3* db, void*, int, const char* const*, sqlite3_vtab** out, char**) {
  int rc = sqlite3_declare_vtab(db, "CREATE TABLE x(idx INTEGER, value, tensor HIDDEN)");
  if (rc != SQLITE_OK) return rc;
  auto* vtab = static_cast<sqlite3_vtab*>(sqlite3_malloc(sizeof(sqlite3_vtab)));
  if (!vtab) return SQLITE_NOMEM;
  std::memset(vtab, 0, sizeof *vtab);
  sqlite3_vtab_config(db, SQLITE_VTAB_INNOCUOUS);
  *out = vtab;
  return SQLITE_OK;
}

int each_disconnect(sqlite3_vtab* vtab) {
  sqlite3_free(vtab);
  return SQLITE_OK;
}

int each_open(sqlite3_vtab*, sqlite3_vtab_cursor** out) {
  auto* c = new (std::nothrow) EachCursor();
  if (!c) return SQLITE_NOMEM;
  *out = &c->base;
  return SQLITE_OK;
}

int each_close(sqlite3_vtab_cursor* cur) {
  delete reinterpret_cast<EachCursor*>(cur);
  return SQLITE_OK;
}

// The tensor argument must be an equality constraint on the hidden column.
int each_best_index(sqlite3_vtab*, sqlite3_index_info* info) {
  int arg = -1;
  bool unusable = false;
  for (int k = 0; k < info->nConstraint; ++k) {
    const auto& c = info->aConstraint[k];
    if (c.iColumn != kColTensor || c.op != SQLITE_INDEX_CONSTRAINT_EQ) continue;
    if (!c.usable) {
      unusable = true;
      continue;
    }
    arg = k;
  }
  if (arg < 0) {
    if (unusable) return SQLITE_CONSTRAINT;  // ask SQLite for another plan
    info->estimatedCost = 1e12;
    info->idxNum = 0;
    return SQLITE_OK;
  }
  info->aConstraintUsage[arg].argvIndex = 1;
  info->aConstraintUsage[arg].omit = 1;
  info->estimatedCost = 1000;
  info->idxNum = 1;
  if (info->nOrderBy == 1 && info->aOrderBy[0].iColumn == kColIdx && !info->aOrderBy[0].desc) info->orderByConsumed = 1;
  return SQLITE_OK;
}

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

sqlite3_module make_module() {
  sqlite3_module m;
  std::memset(&m, 0, sizeof m);
  m.iVersion = 0;
  m.xCreate = nullptr;  // eponymous only: no CREATE VIRTUAL TABLE
  m.xConnect = each_connect;
  m.xBestIndex = each_best_index;
  m.xDisconnect = each_disconnect;
  m.xDestroy = each_disconnect;
  m.xOpen = each_open;
  m.xClose = each_close;
  m.xFilter = each_filter;
  m.xNext = each_next;
  m.xEof = each_eof;
  m.xColumn = each_column;
  m.xRowid = each_rowid;
  return m;
}

const sqlite3_module kEachModule = make_module();

}  // namespace

int register_each_module(sqlite3* db) { return sqlite3_create_module(db, "tensor_each", &kEachModule, nullptr); }

}  // namespace trialdb::sqlext
