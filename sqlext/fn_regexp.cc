// regexp(pattern, text): Python re.search semantics on PCRE2 (schema/py_regex.h), so
// `text REGEXP pattern` in SQL matches collections the way smdebug's include_regex does.
// The compiled pattern is cached on the statement with sqlite3_set_auxdata, so a constant
// pattern compiles once per statement, not once per row.
#include <memory>

#include "schema/py_regex.h"
#include "sqlext/tensor_arg.h"

namespace trialdb::sqlext {

namespace {

void free_regex(void* p) { delete static_cast<PyRegex*>(p); }

void regexp_fn(sqlite3_context* ctx, int /*argc*/, sqlite3_value** argv) {
  guarded(ctx, "regexp", [&] {
    if (sqlite3_value_type(argv[0]) == SQLITE_NULL || sqlite3_value_type(argv[1]) == SQLITE_NULL) return;
    auto* re = static_cast<PyRegex*>(sqlite3_get_auxdata(ctx, 0));
    if (!re) {
      const char* pat = reinterpret_cast<const char*>(sqlite3_value_text(argv[0]));
      if (!pat) return sqlite3_result_error_nomem(ctx);
      std::string err;
      std::unique_ptr<PyRegex> compiled =
          PyRegex::compile(std::string_view(pat, static_cast<size_t>(sqlite3_value_bytes(argv[0]))), &err);
      if (!compiled) return result_errorf(ctx, "regexp: %s", err.c_str());
      re = compiled.release();
      // set_auxdata may free re at once (when it cannot cache it), so re-read it afterwards.
      sqlite3_set_auxdata(ctx, 0, re, free_regex);
      re = static_cast<PyRegex*>(sqlite3_get_auxdata(ctx, 0));
      if (!re) {  // not cached (e.g. out of memory): compile a private copy for this row
        compiled = PyRegex::compile(std::string_view(pat, static_cast<size_t>(sqlite3_value_bytes(argv[0]))), &err);
        if (!compiled) return sqlite3_result_error_nomem(ctx);
        const char* s = reinterpret_cast<const char*>(sqlite3_value_text(argv[1]));
        if (!s) return sqlite3_result_error_nomem(ctx);
        sqlite3_result_int(ctx, compiled->search(std::string_view(s, static_cast<size_t>(sqlite3_value_bytes(argv[1])))));
        return;
      }
    }
    const char* s = reinterpret_cast<const char*>(sqlite3_value_text(argv[1]));
    if (!s) return sqlite3_result_error_nomem(ctx);
    sqlite3_result_int(ctx, re->search(std::string_view(s, static_cast<size_t>(sqlite3_value_bytes(argv[1])))));
  });
}

}  // namespace

int register_regexp_function(sqlite3* db) {
  return sqlite3_create_function_v2(db, "regexp", 2, kScalarFlags, nullptr, regexp_fn, nullptr, nullptr, nullptr);
}

}  // namespace trialdb::sqlext
