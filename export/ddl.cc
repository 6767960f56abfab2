// Engine DDL for an export (ddl.h).
#include "export/ddl.h"

#include "export/manifest.h"
#include "schema/status.h"

namespace trialdb::exporter {

namespace {

using parquet::ColumnType;

std::string hive_type(ColumnType t) {
  switch (t) {
    case ColumnType::kBoolean: return "BOOLEAN";
    case ColumnType::kInt64: return "BIGINT";
    case ColumnType::kDouble: return "DOUBLE";
    case ColumnType::kString: return "STRING";
    case ColumnType::kBytes: return "BINARY";
  }
  return "STRING";
}

std::string trino_type(ColumnType t) {
  switch (t) {
    case ColumnType::kString: return "VARCHAR";
    case ColumnType::kBytes: return "VARBINARY";
    default: return hive_type(t);
  }
}

std::string backquoted(const std::string& name) { return "`" + name + "`"; }
std::string quoted(const std::string& name) { return "\"" + name + "\""; }

std::string sql_string(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("''") : std::string(1, c);
  return q + "'";
}

std::string column_lines(const PublicTable& t, std::string (*quote)(const std::string&),
                         std::string (*type)(ColumnType), bool trial_last) {
  std::string out;
  for (const parquet::Column& c : t.columns) out += "  " + quote(c.name) + " " + type(c.type) + ",\n";
  if (trial_last) out += "  " + quote(kPartitionColumn) + " " + type(ColumnType::kString) + ",\n";
  out.resize(out.size() - 2);  // the last ",\n"
  return out + "\n";
}

std::string join(const std::vector<std::string>& items, const std::string& sep) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) out += (i ? sep : "") + items[i];
  return out;
}

// Athena's projection puts a trial's name into the location template as it is, and its enum is
// one comma-separated string: a name with a comma, or one whose folder name is escaped, would
// give a wrong partition list or a wrong location. Such a name is refused.
void require_athena_names(const std::vector<std::string>& trials) {
  for (const std::string& trial : trials) {
    const bool escaped = partition_folder(trial) != std::string(kPartitionColumn) + "=" + trial;
    if (escaped || trial.find(',') != std::string::npos)
      throw Error(ErrorKind::kUsage,
                  "trial '" + trial + "': Athena's partition projection cannot name it (" +
                      (escaped ? "its folder name is escaped" : "a comma separates the projection's values") +
                      "); rename it (trialdb rename) or use --ddl trino or spark, which read the folder names");
  }
}

std::string athena(const PublicTable& t, const std::string& root, const std::vector<std::string>& trials) {
  const std::string where = root + "/" + t.name + "/";
  std::string projection = trials.empty() ? "  'projection.trial.type' = 'injected',\n"
                                          : "  'projection.trial.type' = 'enum',\n  'projection.trial.values' = " +
                                                sql_string(join(trials, ",")) + ",\n";
  return "CREATE EXTERNAL TABLE IF NOT EXISTS " + backquoted(t.name) + " (\n" +
         column_lines(t, backquoted, hive_type, false) + ")\nPARTITIONED BY (" + backquoted(kPartitionColumn) +
         " STRING)\nSTORED AS PARQUET\nLOCATION " + sql_string(where) +
         "\nTBLPROPERTIES (\n  'projection.enabled' = 'true',\n" + projection +
         "  'storage.location.template' = " + sql_string(where + "trial=${trial}/") + "\n);\n";
}

std::string trino(const PublicTable& t, const std::string& root) {
  return "CREATE TABLE IF NOT EXISTS trialdb." + quoted(t.name) + " (\n" + column_lines(t, quoted, trino_type, true) +
         ")\nWITH (\n  format = 'PARQUET',\n  external_location = " + sql_string(root + "/" + t.name) +
         ",\n  partitioned_by = ARRAY['" + kPartitionColumn +
         "']\n);\nCALL system.sync_partition_metadata('trialdb', " + sql_string(t.name) + ", 'FULL');\n";
}

std::string spark(const PublicTable& t, const std::string& root) {
  return "CREATE TABLE IF NOT EXISTS " + backquoted(t.name) + " (\n" + column_lines(t, backquoted, hive_type, true) +
         ")\nUSING PARQUET\nPARTITIONED BY (" + backquoted(kPartitionColumn) + ")\nLOCATION " +
         sql_string(root + "/" + t.name) + ";\nMSCK REPAIR TABLE " + backquoted(t.name) + ";\n";
}

std::string duckdb(const PublicTable& t, const std::string& root) {
  std::vector<std::string> columns = {quoted(kPartitionColumn)};
  for (const parquet::Column& c : t.columns) columns.push_back(quoted(c.name));
  return "CREATE OR REPLACE VIEW " + quoted(t.name) + " AS\nSELECT " + join(columns, ", ") + "\nFROM read_parquet(" +
         sql_string(root + "/" + t.name + "/*/*.parquet") +
         ", hive_partitioning = true, hive_types = {'trial': VARCHAR});\n";
}

}  // namespace

std::string engine_ddl(Engine engine, const std::string& location, ValuesExport values,
                       const std::vector<std::string>& trials) {
  std::string out;
  if (engine == Engine::kAthena) require_athena_names(trials);
  if (engine == Engine::kTrino) out += "CREATE SCHEMA IF NOT EXISTS trialdb;\n\n";
  for (const PublicTable& t : public_tables()) {
    if (!wanted(t, values)) continue;
    switch (engine) {
      case Engine::kAthena: out += athena(t, location, trials); break;
      case Engine::kTrino: out += trino(t, location); break;
      case Engine::kSpark: out += spark(t, location); break;
      case Engine::kDuckDb: out += duckdb(t, location); break;
    }
    out += "\n";
  }
  return out;
}

}  // namespace trialdb::exporter
