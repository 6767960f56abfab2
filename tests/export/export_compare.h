// Comparing two export folders table by table through DuckDB, for the tests that check that an
// export after any sequence of operations equals a fresh export of the database into an empty
// folder (tests/export, tests/sequences). Each table is read as a reader would read it (a glob
// over the dataset with Hive partitioning), so a file seen twice or a stale partition counts.
#pragma once
#include <string>

#include "export/public_tables.h"

namespace trialdb::test {

// "" when every table `values` exports holds the same rows (as a multiset, trial included) in
// both folders; else one line per table that differs: how many rows are only in `got`, how
// many only in `expected`, and a few of them.
std::string export_difference(const std::string& got, const std::string& expected, exporter::ValuesExport values);

// The reader's view of one table of an export: DuckDB's read_parquet over every part file with
// Hive partitioning, the trial as VARCHAR.
std::string export_dataset_sql(const std::string& out, const std::string& table);

}  // namespace trialdb::test
