// Comparing two export folders through DuckDB (export_compare.h).
#include "export_compare.h"

#include <algorithm>
#include <filesystem>

#include "duckdb_query.h"

namespace trialdb::test {

namespace {

namespace fs = std::filesystem;
constexpr int kRowsShown = 3;

std::string sql_string(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("''") : std::string(1, c);
  return q + "'";
}

bool has_part_files(const std::string& out, const std::string& table) {
  std::error_code ec;
  const fs::path dir = fs::path(out) / table;
  if (!fs::is_directory(dir, ec)) return false;
  for (const auto& partition : fs::directory_iterator(dir, ec))
    for (const auto& f : fs::directory_iterator(partition.path(), ec))
      if (f.path().extension() == ".parquet" && f.path().filename().string()[0] != '.') return true;
  return false;
}

std::string columns(const exporter::PublicTable& t) {
  std::string cols = exporter::kPartitionColumn;
  for (const parquet::Column& c : t.columns) cols += ", \"" + c.name + "\"";
  return cols;
}

std::string rows_text(const std::vector<Row>& rows) {
  std::string out;
  for (const Row& row : rows) {
    out += "    (";
    for (size_t i = 0; i < row.size(); ++i) out += (i ? ", " : "") + (row[i] ? *row[i] : std::string("NULL"));
    out += ")\n";
  }
  return out;
}

}  // namespace

std::string export_dataset_sql(const std::string& out, const std::string& table) {
  return "read_parquet(" + sql_string(out + "/" + table + "/*/*.parquet") +
         ", hive_partitioning = true, hive_types = {'trial': VARCHAR})";
}

std::string export_difference(const std::string& got, const std::string& expected, exporter::ValuesExport values) {
  // One DuckDB run counts the differences of every table; the rows are fetched only for those
  // that differ.
  struct Compared {
    std::string table, only_got, only_expected;
  };
  std::vector<Compared> compared;
  std::string counts_sql;
  for (const exporter::PublicTable& t : exporter::public_tables()) {
    if (!exporter::wanted(t, values)) continue;
    const bool in_got = has_part_files(got, t.name), in_expected = has_part_files(expected, t.name);
    if (!in_got && !in_expected) continue;
    const std::string cols = columns(t);
    const std::string a = "SELECT " + cols + " FROM " + export_dataset_sql(in_got ? got : expected, t.name) +
                          (in_got ? "" : " WHERE false");
    const std::string b = "SELECT " + cols + " FROM " + export_dataset_sql(in_expected ? expected : got, t.name) +
                          (in_expected ? "" : " WHERE false");
    compared.push_back({t.name, "(" + a + " EXCEPT ALL " + b + ")", "(" + b + " EXCEPT ALL " + a + ")"});
    counts_sql += std::string(counts_sql.empty() ? "" : " UNION ALL ") + "SELECT " + sql_string(t.name) +
                  ", (SELECT count(*) FROM " + compared.back().only_got + "), (SELECT count(*) FROM " +
                  compared.back().only_expected + ")";
  }
  if (compared.empty()) return "";
  std::string report;
  for (const Row& row : duckdb_rows({counts_sql})) {
    if (row.at(1) == Cell("0") && row.at(2) == Cell("0")) continue;
    const Compared& c =
        *std::find_if(compared.begin(), compared.end(), [&](const Compared& x) { return Cell(x.table) == row[0]; });
    report += c.table + ": " + *row[1] + " row(s) only in " + got + ", " + *row[2] + " only in " + expected + "\n";
    report += rows_text(duckdb_rows({"SELECT * FROM " + c.only_got + " LIMIT " + std::to_string(kRowsShown)}));
    report += "  vs\n" +
              rows_text(duckdb_rows({"SELECT * FROM " + c.only_expected + " LIMIT " + std::to_string(kRowsShown)}));
  }
  return report;
}

}  // namespace trialdb::test
