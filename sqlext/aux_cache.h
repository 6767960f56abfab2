// Something compiled from a text argument (a regular expression, a list of them), cached on the
// statement with sqlite3_set_auxdata: SQLite keeps it while that argument stays the same (a
// constant pattern compiles once per statement, not once per row) and frees it when the argument
// changes. Used by regexp (fn_regexp.cc) and rule_regexp_any (fn_rule.cc).
#pragma once
#include <memory>
#include <string>
#include <string_view>

#include "schema/status.h"
#include "sqlext/tensor_arg.h"

namespace trialdb::sqlext {

// The object compiled from text argument argno (not NULL), from the statement's cache or freshly
// compiled with compile(std::string_view text, std::unique_ptr<T>* out) -> Status.
// When SQLite cannot cache it (out of memory) the object is compiled into *uncached instead,
// for this row only. Returns null with an error set on ctx: "<fn>: <compile error>" or out of
// memory.
template <class T, class Compile>
const T* cached_compiled(sqlite3_context* ctx, sqlite3_value** argv, int argno, const char* fn, Compile&& compile,
                         std::unique_ptr<T>* uncached) {
  if (auto* cached = static_cast<const T*>(sqlite3_get_auxdata(ctx, argno))) return cached;
  const char* text = reinterpret_cast<const char*>(sqlite3_value_text(argv[argno]));
  if (!text) return sqlite3_result_error_nomem(ctx), nullptr;
  const std::string_view source(text, static_cast<size_t>(sqlite3_value_bytes(argv[argno])));
  std::unique_ptr<T> fresh;
  if (Status st = compile(source, &fresh); !st.is_ok()) return result_errorf(ctx, "%s: %s", fn, st.cause().c_str()), nullptr;
  // set_auxdata frees the object at once when it cannot cache it, so read it back afterwards.
  sqlite3_set_auxdata(ctx, argno, fresh.release(), [](void* p) { delete static_cast<T*>(p); });
  if (auto* cached = static_cast<const T*>(sqlite3_get_auxdata(ctx, argno))) return cached;
  if (!compile(source, uncached).is_ok() || !*uncached) return sqlite3_result_error_nomem(ctx), nullptr;
  return uncached->get();
}

}  // namespace trialdb::sqlext
