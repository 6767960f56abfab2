// Running DuckDB through node for the tests (duckdb_query.h).
#include "duckdb_query.h"

#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

#include "common/run_process.h"
#include "common/temp_dir.h"

namespace trialdb::test {

namespace {

std::string node_path() {
  for (const char* dir : {"/usr/local/bin", "/usr/bin", "/bin"}) {
    const std::string p = std::string(dir) + "/node";
    if (access(p.c_str(), X_OK) == 0) return p;
  }
  if (const char* path = getenv("PATH")) {
    std::stringstream ss(path);
    std::string dir;
    while (std::getline(ss, dir, ':'))
      if (!dir.empty() && access((dir + "/node").c_str(), X_OK) == 0) return dir + "/node";
  }
  return "";
}

std::string script() { return std::string(TRIALDB_DUCKDB_TEST_DIR) + "/duckdb_rows.js"; }

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace

std::string duckdb_unavailable() {
  if (node_path().empty()) return "node is not installed";
  if (!std::filesystem::exists(std::string(TRIALDB_DUCKDB_TEST_DIR) + "/node_modules/@duckdb/node-api"))
    return "@duckdb/node-api is missing: run `npm install` in tests/duckdb (scripts/setup.sh does)";
  return "";
}

std::vector<Row> duckdb_rows(const std::vector<std::string>& statements) {
  std::vector<std::string> args = {node_path(), script()};
  args.insert(args.end(), statements.begin(), statements.end());
  TempDir dir("trialdb_duckdb");
  const int rc = run_process(args, dir / "out", dir / "err");
  if (rc != 0) throw std::runtime_error("DuckDB: " + read_all(dir / "err"));
  std::vector<Row> rows;
  std::stringstream lines(read_all(dir / "out"));
  std::string line;
  while (std::getline(lines, line)) {
    Row row;
    for (const auto& c : nlohmann::json::parse(line)) row.push_back(c.is_null() ? Cell() : Cell(c.get<std::string>()));
    rows.push_back(std::move(row));
  }
  return rows;
}

std::string hex_cell(std::string_view bytes) {
  static const char* digits = "0123456789abcdef";
  std::string hex;
  for (unsigned char b : bytes) hex += {digits[b >> 4], digits[b & 15]};
  return hex;
}

std::string double_cell(double v) {
  char bytes[sizeof v];
  std::memcpy(bytes, &v, sizeof v);
  return hex_cell(std::string_view(bytes, sizeof v));
}

}  // namespace trialdb::test
