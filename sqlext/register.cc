// The list of everything sqlext registers on a connection.
#include "sqlext/register.h"

#include "sqlext/tensor_arg.h"

extern "C" int trialdb_register_sql_functions(sqlite3* db) {
  using namespace trialdb::sqlext;
  int (*const kRegistrations[])(sqlite3*) = {
      register_meta_functions,
      register_reduce_functions,
      register_regexp_function,
  };
  for (auto reg : kRegistrations) {
    int rc = reg(db);
    if (rc != SQLITE_OK) return rc;
  }
  return SQLITE_OK;
}
