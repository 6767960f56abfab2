// Entry point of the loadable module build/lib/trialdb_rules.so: sqlext's tensor functions and
// regexp plus the rule_* helpers the rule views call, so a rule view, or a rule being written,
// can be queried from a stock sqlite3 shell or Python:
//   sqlite3 shell:  .load build/lib/trialdb_rules
//   Python:         con.enable_load_extension(True); con.load_extension("build/lib/trialdb_rules")
// SQLite derives the entry point name sqlite3_trialdbrules_init from the file name.
#include "rules_sql/rule_functions.h"
#include "sqlext/module_init.h"

extern "C" {
SQLITE_EXTENSION_INIT1

__attribute__((visibility("default"))) int sqlite3_trialdbrules_init(sqlite3* db, char** errmsg,
                                                                     const sqlite3_api_routines* api) {
  return trialdb_module_init(db, errmsg, api, "trialdb_rules", trialdb::rules::register_rule_functions);
}
}
