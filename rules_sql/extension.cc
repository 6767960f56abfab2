// Entry point of the loadable module build/lib/trialdb_rules.so: sqlext's tensor functions and
// regexp plus the rule_* helpers the rule views call, so a rule view, or a rule being written,
// can be queried from a stock sqlite3 shell or Python:
//   sqlite3 shell:  .load build/lib/trialdb_rules
//   Python:         con.enable_load_extension(True); con.load_extension("build/lib/trialdb_rules")
// SQLite derives the entry point name sqlite3_trialdbrules_init from the file name.
#include "rules_sql/rule_functions.h"
#include "sqlext/register.h"
#include "sqlext/sqlite_api.h"

extern "C" {
SQLITE_EXTENSION_INIT1

__attribute__((visibility("default"))) int sqlite3_trialdbrules_init(sqlite3* db, char** errmsg,
                                                                     const sqlite3_api_routines* api) {
  SQLITE_EXTENSION_INIT2(api);
  int rc = trialdb_register_sql_functions(db);
  if (rc == SQLITE_OK) rc = trialdb::rules::register_rule_functions(db);
  if (rc != SQLITE_OK && errmsg) *errmsg = sqlite3_mprintf("trialdb_rules: registering SQL functions failed (%d)", rc);
  return rc;
}
}
