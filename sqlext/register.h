// Registers every trialdb SQL function (tensor_*, regexp, the tensor_sum / tensor_concat
// aggregates, the tensor_each table-valued function, the rule views' rule_* helpers, of which
// rule_label_pairs is table-valued, and the histogram views' histogram_json,
// histogram_of_element and histogram_each) on one connection. The CLI and the rule runner call
// this; the loadable module (build/lib/trialdb.so) calls it from sqlite3_trialdb_init.
#pragma once
#include <sqlite3.h>

#ifdef __cplusplus
extern "C" {
#endif

// SQLITE_OK, or the first SQLite error code a registration returned.
int trialdb_register_sql_functions(sqlite3* db);

#ifdef __cplusplus
}
#endif
