// The statements that make an engine read an export (docs/SCALE.md): one table or view per
// exported public view, with the view's name and columns, so `SELECT ... FROM reductions WHERE
// trial = ...` reads the same in the engine as in SQLite. The trial is the partition column.
//   athena  CREATE EXTERNAL TABLE ... PARTITIONED BY (trial) with partition projection: an enum of
//           the database's trials when they are known, else injected (queries then name trials);
//           names Hive escapes, or with a comma, cannot be projected (refused)
//   trino   CREATE TABLE ... WITH (external_location, partitioned_by) for the Hive connector, then
//           system.sync_partition_metadata
//   spark   CREATE TABLE ... USING PARQUET PARTITIONED BY (trial) LOCATION, then MSCK REPAIR TABLE
//   duckdb  CREATE VIEW ... AS SELECT <columns> FROM read_parquet(..., hive_partitioning)
#pragma once
#include <string>
#include <vector>

#include "export/public_tables.h"

namespace trialdb::exporter {

enum class Engine { kAthena, kTrino, kSpark, kDuckDb };

// `location` is the export's root (s3://bucket/prefix or a folder), without a trailing '/';
// `trials` the trial names for Athena's enum projection (empty: injected projection). Throws
// Error (kUsage) for Athena when a name cannot be projected (a comma, or an escaped folder name).
std::string engine_ddl(Engine engine, const std::string& location, ValuesExport values,
                       const std::vector<std::string>& trials);

}  // namespace trialdb::exporter
