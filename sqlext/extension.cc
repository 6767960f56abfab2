// Entry point of the loadable module build/lib/trialdb.so:
//   sqlite3 shell:  .load build/lib/trialdb
//   Python:         con.enable_load_extension(True); con.load_extension("build/lib/trialdb")
// SQLite derives the entry point name sqlite3_trialdb_init from the file name.
#include "sqlext/module_init.h"

extern "C" {
SQLITE_EXTENSION_INIT1

__attribute__((visibility("default"))) int sqlite3_trialdb_init(sqlite3* db, char** errmsg,
                                                                const sqlite3_api_routines* api) {
  return trialdb_module_init(db, errmsg, api, "trialdb", nullptr);
}
}
