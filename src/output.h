// Printing query results: an aligned table that fits a terminal, CSV (RFC 4180) or JSON (an
// array of objects). Shared by every subcommand that prints rows.
#pragma once
#include <sqlite3.h>

#include <ostream>
#include <string>
#include <vector>

namespace trialdb::cli {

enum class Format { kTable, kCsv, kJson };

// Runs every statement in sql (the last one's rows are printed). Throws Error with
// SQLite's message on failure. Blobs print as <blob N bytes> (table), hex (csv) or null (json).
void print_query(sqlite3* db, const std::string& sql, Format format, std::ostream& out);

// A NULL cell in a Table (prints NULL in tables, empty in CSV, null in JSON).
inline const std::string kNullCell = std::string(1, '\x01');

// Rows already in memory: column names + cells (kNullCell for NULL).
struct Table {
  std::vector<std::string> columns;
  std::vector<std::vector<std::string>> rows;
  std::vector<bool> numeric;    // per column: print unquoted in JSON, right-aligned in tables
};
void print_table(const Table& t, Format format, std::ostream& out);

// Width of the terminal on stdout, or 0 when it is not a terminal.
int terminal_width();

}  // namespace trialdb::cli
