// Entry point of the loadable module build/lib/trialdb.so, the one module of trialdb: every SQL
// function (sqlext's tensor_*, regexp, and the rule views' rule_* helpers), so the rule views run
// in a stock sqlite3 shell or Python too:
//   sqlite3 shell:  .load build/lib/trialdb
//   Python:         con.enable_load_extension(True); con.load_extension("build/lib/trialdb")
// SQLite derives the entry point name sqlite3_trialdb_init from the file name.
//
// Examples (tests/sqlext/test_doc_examples.py runs them on the fixture trial pt_bad_init):
//   sqlite> SELECT tensor_json(tensor_from_json('[[1, 2], [3, 4]]', 'int8'));
//   [[1,2],[3,4]]
//   sqlite> SELECT 'gradient/Net_fc.weight' REGEXP '^gradient', rule_bool('yes');
//   1|1
#include "sqlext/register.h"
#include "sqlext/sqlite_api.h"

extern "C" {
SQLITE_EXTENSION_INIT1

__attribute__((visibility("default"))) int sqlite3_trialdb_init(sqlite3* db, char** errmsg,
                                                                const sqlite3_api_routines* api) {
  SQLITE_EXTENSION_INIT2(api);
  int rc = trialdb_register_sql_functions(db);
  if (rc != SQLITE_OK && errmsg) *errmsg = sqlite3_mprintf("trialdb: registering SQL functions failed (%d)", rc);
  return rc;
}
}
