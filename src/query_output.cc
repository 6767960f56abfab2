// print_query (output.h): the rows of an SQL query as they come. Statements run in order; only
// the last one's rows are printed, so a statement is known to be the last when what follows it
// prepares to nothing (whitespace and comments).
#include <sqlite3.h>

#include <ostream>
#include <string>
#include <vector>

#include "schema/status.h"
#include "src/output.h"

namespace trialdb::cli {

namespace {

constexpr char kBase64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

std::string base64(const unsigned char* p, size_t n) {
  std::string out;
  out.reserve((n + 2) / 3 * 4);
  for (size_t i = 0; i < n; i += 3) {
    const unsigned v = p[i] << 16 | (i + 1 < n ? p[i + 1] << 8 : 0) | (i + 2 < n ? p[i + 2] : 0);
    out += kBase64[v >> 18 & 63];
    out += kBase64[v >> 12 & 63];
    out += i + 1 < n ? kBase64[v >> 6 & 63] : '=';
    out += i + 2 < n ? kBase64[v & 63] : '=';
  }
  return out;
}

std::string hex(const unsigned char* p, size_t n) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * n);
  for (size_t i = 0; i < n; ++i) {
    out += kHex[p[i] >> 4];
    out += kHex[p[i] & 15];
  }
  return out;
}

[[noreturn]] void sql_error(sqlite3* db) {
  throw Error(Status::database(std::string("SQL error: ") + sqlite3_errmsg(db)));
}

// A streamed result stops at the first row that could not be written (a full disk behind
// stdout), rather than running the whole query into a failed stream.
void check_written(const std::ostream& out) {
  if (!out) throw Error(Status::io("cannot write the rows to the output (disk full, or the reader went away?)"));
}

// Whether nothing but whitespace and comments follows.
bool nothing_follows(sqlite3* db, const char* tail) {
  sqlite3_stmt* next = nullptr;
  const int rc = sqlite3_prepare_v2(db, tail, -1, &next, nullptr);
  const bool empty = rc == SQLITE_OK && next == nullptr;
  sqlite3_finalize(next);
  return empty;  // a statement that does not prepare yet (it needs an earlier one) still follows
}

// The JSON keys of the statement's columns (json_keys in output.h).
std::vector<std::string> column_keys(sqlite3_stmt* st) {
  std::vector<std::string> names;
  for (int c = 0; c < sqlite3_column_count(st); ++c) names.push_back(sqlite3_column_name(st, c));
  return json_keys(names);
}

nlohmann::ordered_json json_cell(sqlite3_stmt* st, int c) {
  switch (sqlite3_column_type(st, c)) {
    case SQLITE_NULL: return nullptr;
    case SQLITE_INTEGER: return sqlite3_column_int64(st, c);
    case SQLITE_FLOAT: {
      const double v = sqlite3_column_double(st, c);
      if (!std::isfinite(v)) return json_number(v);
      return nlohmann::ordered_json::parse(format_real(v));
    }
    case SQLITE_BLOB:
      return base64(static_cast<const unsigned char*>(sqlite3_column_blob(st, c)),
                    static_cast<size_t>(sqlite3_column_bytes(st, c)));
    default: return std::string(reinterpret_cast<const char*>(sqlite3_column_text(st, c)));
  }
}

std::string text_cell(sqlite3_stmt* st, int c, Format format, bool* numeric) {
  switch (sqlite3_column_type(st, c)) {
    case SQLITE_NULL: return kNullCell;
    case SQLITE_INTEGER: return std::to_string(sqlite3_column_int64(st, c));
    case SQLITE_FLOAT: return format_real(sqlite3_column_double(st, c));
    case SQLITE_BLOB: {
      *numeric = false;
      const auto* p = static_cast<const unsigned char*>(sqlite3_column_blob(st, c));
      const size_t n = static_cast<size_t>(sqlite3_column_bytes(st, c));
      return format == Format::kCsv ? hex(p, n) : "<blob " + std::to_string(n) + " bytes>";
    }
    default: *numeric = false; return reinterpret_cast<const char*>(sqlite3_column_text(st, c));
  }
}

// The last statement's rows, streamed (CSV, JSON) or collected (table).
void print_rows(sqlite3* db, sqlite3_stmt* st, Format format, std::ostream& out) {
  const int nc = sqlite3_column_count(st);
  int rc;
  if (format == Format::kJson) {
    const std::vector<std::string> keys = column_keys(st);
    out << "[";
    bool first = true;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
      nlohmann::ordered_json row = nlohmann::ordered_json::object();
      for (int c = 0; c < nc; ++c) row[keys[c]] = json_cell(st, c);
      std::string text = json_text(row);
      for (size_t at = 0; (at = text.find('\n', at)) != std::string::npos; at += 3) text.replace(at, 1, "\n  ");
      out << (first ? "\n  " : ",\n  ") << text;
      check_written(out);
      first = false;
    }
    if (rc != SQLITE_DONE) sql_error(db);
    out << (first ? "]\n" : "\n]\n");
    return;
  }
  if (format == Format::kCsv) {
    for (int c = 0; c < nc; ++c) out << (c ? "," : "") << csv_cell(sqlite3_column_name(st, c));
    out << "\n";
    bool ignored;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
      for (int c = 0; c < nc; ++c) {
        const std::string cell = text_cell(st, c, format, &ignored);
        out << (c ? "," : "") << (cell == kNullCell ? "" : csv_cell(cell));
      }
      out << "\n";
      check_written(out);
    }
    if (rc != SQLITE_DONE) sql_error(db);
    return;
  }
  Table t;
  for (int c = 0; c < nc; ++c) t.columns.push_back(sqlite3_column_name(st, c));
  t.numeric.assign(nc, true);
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    std::vector<std::string> row(nc);
    for (int c = 0; c < nc; ++c) {
      bool numeric = true;
      row[c] = text_cell(st, c, format, &numeric);
      if (!numeric) t.numeric[c] = false;
    }
    t.rows.push_back(std::move(row));
  }
  if (rc != SQLITE_DONE) sql_error(db);
  print_table(t, format, out);
}

}  // namespace

void print_query(sqlite3* db, const std::string& sql, Format format, std::ostream& out) {
  const char* tail = sql.c_str();
  while (tail && *tail) {
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(db, tail, -1, &st, &tail) != SQLITE_OK) sql_error(db);
    if (!st) continue;  // whitespace or a comment
    try {
      if (sqlite3_column_count(st) > 0 && nothing_follows(db, tail)) {
        print_rows(db, st, format, out);
      } else {
        int rc;
        while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        }
        if (rc != SQLITE_DONE) sql_error(db);
      }
    } catch (...) {
      sqlite3_finalize(st);
      throw;
    }
    sqlite3_finalize(st);
  }
}

}  // namespace trialdb::cli
