// The list of everything sqlext registers on a connection.
//
// Examples (tests/sqlext/test_doc_examples.py runs them on the fixture trial pt_bad_init):
//   sqlite> SELECT count(DISTINCT name) FROM pragma_function_list
//      ...>  WHERE name GLOB 'tensor_*' OR name GLOB 'rule_*' OR name GLOB 'histogram_*'
//      ...>     OR name IN ('regexp', 'distribution_quantile');
//   38
//   sqlite> SELECT count(*) FROM pragma_module_list
//      ...>  WHERE name IN ('tensor_each', 'histogram_each', 'rule_label_pairs');
//   3
#include "sqlext/register.h"

#include "sqlext/tensor_arg.h"

extern "C" int trialdb_register_sql_functions(sqlite3* db) {
  using namespace trialdb::sqlext;
  int (*const kRegistrations[])(sqlite3*) = {
      register_meta_functions,        register_reduce_functions,       register_count_functions,
      register_stats_functions,       register_distribution_functions, register_compare_functions,
      register_elementwise_functions, register_json_functions,         register_aggregate_functions,
      register_each_module,           register_regexp_function,        register_rule_functions,
      register_histogram_functions,   register_label_pairs_module,
  };
  for (auto reg : kRegistrations) {
    int rc = reg(db);
    if (rc != SQLITE_OK) return rc;
  }
  return SQLITE_OK;
}
