// The list of everything sqlext registers on a connection.
#include "sqlext/register.h"

#include "sqlext/tensor_arg.h"

extern "C" int trialdb_register_sql_functions(sqlite3* db) {
  using namespace trialdb::sqlext;
  int (*const kRegistrations[])(sqlite3*) = {
      register_meta_functions,
      register_reduce_functions,
      register_count_functions,
      register_stats_functions,
      register_distribution_functions,
      register_compare_functions,
      register_elementwise_functions,
      register_json_functions,
      register_aggregate_functions,
      register_each_module,
      register_regexp_function,
      register_rule_functions,
  };
  for (auto reg : kRegistrations) {
    int rc = reg(db);
    if (rc != SQLITE_OK) return rc;
  }
  return SQLITE_OK;
}
