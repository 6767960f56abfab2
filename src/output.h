// Printing query results: an aligned table that fits a terminal, CSV (RFC 4180) or JSON (an
// array of objects). Shared by every subcommand that prints rows, with the two rules every
// output follows: text shown to a person carries no raw control characters (printable), and
// JSON is always valid (non-finite numbers as strings, invalid UTF-8 replaced).
#pragma once
#include <sqlite3.h>

#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace trialdb::cli {

enum class Format { kTable, kCsv, kJson };

// Runs every statement in sql; the last one's rows are printed (src/query_output.cc): CSV and JSON
// as they come, in constant memory, the table once every row is in (for its widths). Throws
// Error with SQLite's message on failure. Blobs print as <blob N bytes> (table), hex (CSV) or
// base64 (JSON). JSON is an array of objects whose keys are the columns in SELECT order (json_keys).
void print_query(sqlite3* db, const std::string& sql, Format format, std::ostream& out);

// The JSON keys of columns named `names`: each name, a repeated one suffixed _2, _3, ... with
// the first number that makes a key no column is named and no other key is (SELECT 1 AS a,
// 2 AS a_2, 3 AS a: a, a_2, a_3), so no two columns ever share a key.
std::vector<std::string> json_keys(const std::vector<std::string>& names);

// The shortest "%.<p>g" text (p at least kMinRealPrecision) that reads back as d: "0.1", "1e-05",
// "100000", "123456789", "0.30000000000000004"; non-finite as "%g" writes it ("inf", "-nan").
inline constexpr int kMinRealPrecision = 6, kMaxRealPrecision = 17;
std::string shortest_real(double d);

// How every command prints a REAL: shortest_real, or with `digits` significant digits once set
// (--precision).
std::string format_real(double d);
void set_real_digits(int digits);

// The parts with sep between them ("a, b, c").
std::string join(const std::vector<std::string>& parts, const std::string& sep);

// A count with its noun in the right number: counted(1, "step") == "1 step",
// counted(2, "step") == "2 steps", counted(3, "index", "indices") == "3 indices".
std::string counted(uint64_t n, const std::string& singular, const std::string& plural = "");

// A CSV cell (RFC 4180 quoting when needed).
std::string csv_cell(const std::string& s);

// A NULL cell in a Table (prints NULL in tables, empty in CSV, null in JSON).
inline const std::string kNullCell = std::string(1, '\x01');

// Rows already in memory: column names + cells (kNullCell for NULL).
struct Table {
  std::vector<std::string> columns;
  std::vector<std::vector<std::string>> rows;
  std::vector<bool> numeric;  // per column: print unquoted in JSON, right-aligned in tables
};
void print_table(const Table& t, Format format, std::ostream& out);

// Width of the terminal on stdout, or 0 when it is not a terminal or set_full_width() was called
// (--full: tables show every cell whole, however wide).
int terminal_width();
void set_full_width();

// Columns of the terminal that fd is, or 0 when fd is not a terminal. COLUMNS, when set to a
// number, wins (as for other programs that size their output to the terminal).
int terminal_columns(int fd);

// text as it may be shown on a terminal: control characters (C0 and DEL as \xNN, C1 as \u00NN)
// and bytes that are not UTF-8 (as \xNN) escaped, everything else unchanged. For every table
// cell and every message that quotes a name (a tensor, a file, a pattern).
std::string printable(std::string_view text);

// A double as JSON: a number, or the strings "Infinity", "-Infinity" and "NaN", which JSON has no
// number for (README "JSON output").
nlohmann::ordered_json json_number(double v);

// JSON text, indented, with any invalid UTF-8 in strings replaced by U+FFFD.
std::string json_text(const nlohmann::ordered_json& j);

}  // namespace trialdb::cli
