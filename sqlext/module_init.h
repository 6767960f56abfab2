// What every loadable module's entry point does (build/lib/trialdb.so, build/lib/trialdb_rules.so):
// take the host's API table, register sqlext's functions and then the module's own, and name the
// module when that fails. Each module still has its own entry point, named after its file as
// SQLite requires, and its own sqlite3_api (SQLITE_EXTENSION_INIT1 in that file).
#pragma once
#include "sqlext/register.h"
#include "sqlext/sqlite_api.h"

// more: the module's own functions, or null.
inline int trialdb_module_init(sqlite3* db, char** errmsg, const sqlite3_api_routines* api, const char* module,
                               int (*more)(sqlite3*)) {
  SQLITE_EXTENSION_INIT2(api);
  int rc = trialdb_register_sql_functions(db);
  if (rc == SQLITE_OK && more) rc = more(db);
  if (rc != SQLITE_OK && errmsg) *errmsg = sqlite3_mprintf("%s: registering SQL functions failed (%d)", module, rc);
  return rc;
}
