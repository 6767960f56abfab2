// Something compiled from a text argument (a regular expression, a list of them), compiled once
// per connection and text, not once per row: kept in a small per-connection cache keyed by the
// text (CompiledCache, the function's user data). Not on the statement (sqlite3_set_auxdata):
// SQLite keeps auxdata only while the argument is a constant of the statement, and drops it after
// every row when the pattern is read from a column (a rule's parameter joined into its query),
// so the pattern would compile again for every row.
// Used by regexp (fn_regexp.cc) and rule_regexp_any (fn_rule.cc).
#pragma once
#include <memory>
#include <string_view>

#include "schema/status.h"
#include "sqlext/compiled_cache.h"
#include "sqlext/tensor_arg.h"

namespace trialdb::sqlext {

// The object compiled from text argument argno (not NULL) of a function whose user data is a
// CompiledCache<T>: from the connection's cache, or compiled with
// compile(std::string_view text, std::unique_ptr<T>* out) -> Status and cached. *hold keeps it
// alive for this call. Returns null with an error set on ctx: "<fn>: <compile error>" or out of
// memory.
template <class T, class Compile>
const T* cached_compiled(sqlite3_context* ctx, sqlite3_value** argv, int argno, const char* fn, Compile&& compile,
                         std::shared_ptr<const T>* hold) {
  const char* text = reinterpret_cast<const char*>(sqlite3_value_text(argv[argno]));
  if (!text) return sqlite3_result_error_nomem(ctx), nullptr;
  const std::string_view source(text, static_cast<size_t>(sqlite3_value_bytes(argv[argno])));
  auto* connection_cache = static_cast<CompiledCache<T>*>(sqlite3_user_data(ctx));
  *hold = connection_cache->find(source);
  if (!*hold) {
    std::unique_ptr<T> fresh;
    if (Status st = compile(source, &fresh); !st.is_ok())
      return result_errorf(ctx, "%s: %s", fn, st.cause().c_str()), nullptr;
    *hold = std::shared_ptr<const T>(std::move(fresh));
    connection_cache->insert(source, *hold);
  }
  return hold->get();
}

}  // namespace trialdb::sqlext
