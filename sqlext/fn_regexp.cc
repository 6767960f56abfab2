// regexp(pattern, text): Python re.search semantics on PCRE2 (schema/py_regex.h), so
// `text REGEXP pattern` in SQL matches collections the way smdebug's include_regex does.
// The compiled pattern is cached (aux_cache.h), so a pattern compiles once per connection, not
// once per row. A search past PCRE2's limits throws (PyRegex::search),
// which guarded() turns into an SQL error naming the pattern: never a silent 0.
//
// Examples (tests/sqlext/test_doc_examples.py runs them on the fixture trial pt_bad_init):
//   sqlite> SELECT 'Net_conv0.weight' REGEXP '^(?!gradient).*weight',
//      ...>        'gradient/Net_conv0.weight' REGEXP '^(?!gradient).*weight',
//      ...>        regexp('conv\d', 'Net_conv0.bias');
//   1|0|1
//   sqlite> SELECT regexp('(?i)RELU', 'layer1/relu_output_0');
//   1
#include <memory>

#include "schema/py_regex.h"
#include "sqlext/aux_cache.h"
#include "sqlext/tensor_arg.h"

namespace trialdb::sqlext {

namespace {

void regexp_fn(sqlite3_context* ctx, int /*argc*/, sqlite3_value** argv) {
  guarded(ctx, "regexp", [&] {
    if (sqlite3_value_type(argv[0]) == SQLITE_NULL || sqlite3_value_type(argv[1]) == SQLITE_NULL) return;
    std::shared_ptr<const PyRegex> hold;
    const PyRegex* re = cached_compiled<PyRegex>(ctx, argv, 0, "regexp", PyRegex::compile, &hold);
    if (!re) return;
    const char* s = reinterpret_cast<const char*>(sqlite3_value_text(argv[1]));
    if (!s) return sqlite3_result_error_nomem(ctx);
    sqlite3_result_int(ctx, re->search(std::string_view(s, static_cast<size_t>(sqlite3_value_bytes(argv[1])))));
  });
}

}  // namespace

int register_regexp_function(sqlite3* db) {
  return sqlite3_create_function_v2(db, "regexp", 2, kScalarFlags, CompiledCache<PyRegex>::create(), regexp_fn, nullptr,
                                    nullptr, CompiledCache<PyRegex>::destroy);
}

}  // namespace trialdb::sqlext
