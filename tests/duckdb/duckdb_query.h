// DuckDB for the tests: runs SQL in an in-memory DuckDB through node and @duckdb/node-api
// (tests/duckdb/package.json, installed by scripts/setup.sh) and returns the rows in
// duckdb_rows.js's canonical text form (integers in decimal, booleans 0/1, doubles as the hex of
// their little-endian bits, blobs as hex, NULL as nullopt), so a test compares them exactly.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace trialdb::test {

using Cell = std::optional<std::string>;
using Row = std::vector<Cell>;

// Why DuckDB cannot run here ("" when it can): node missing, or the npm package not installed.
std::string duckdb_unavailable();

// Runs the statements in order and returns the last one's rows. Throws std::runtime_error with
// DuckDB's message when a statement fails.
std::vector<Row> duckdb_rows(const std::vector<std::string>& statements);

// The canonical cells of raw bytes (lower-case hex) and of a double (the hex of its
// little-endian bits), as duckdb_rows.js writes them.
std::string hex_cell(std::string_view bytes);
std::string double_cell(double v);

}  // namespace trialdb::test
