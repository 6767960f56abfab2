#include "src/output.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "schema/status.h"

namespace trialdb::cli {

int terminal_width() {
  if (!isatty(STDOUT_FILENO)) return 0;
  struct winsize w;
  if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &w) == 0 && w.ws_col > 0) return w.ws_col;
  return 80;
}

namespace {
std::string csv_cell(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) {
    if (c == '"') q += '"';
    q += c;
  }
  return q + "\"";
}

std::string format_real(double d) {
  if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", d);
  // Shortest form that round-trips.
  for (int prec = 6; prec <= 17; ++prec) {
    char b2[40];
    std::snprintf(b2, sizeof b2, "%.*g", prec, d);
    if (std::strtod(b2, nullptr) == d) return b2;
  }
  return buf;
}
}  // namespace

void print_table(const Table& t, Format format, std::ostream& out) {
  const size_t nc = t.columns.size();
  if (format == Format::kCsv) {
    for (size_t c = 0; c < nc; ++c) out << (c ? "," : "") << csv_cell(t.columns[c]);
    out << "\n";
    for (const auto& r : t.rows) {
      for (size_t c = 0; c < nc; ++c) out << (c ? "," : "") << (r[c] == kNullCell ? "" : csv_cell(r[c]));
      out << "\n";
    }
    return;
  }
  if (format == Format::kJson) {
    nlohmann::json arr = nlohmann::json::array();
    for (const auto& r : t.rows) {
      nlohmann::json o = nlohmann::json::object();
      for (size_t c = 0; c < nc; ++c) {
        bool num = c < t.numeric.size() && t.numeric[c];
        if (r[c] == kNullCell) o[t.columns[c]] = nullptr;
        else if (num && (r[c] == "inf" || r[c] == "-inf")) o[t.columns[c]] = r[c];
        else if (num) o[t.columns[c]] = nlohmann::json::parse(r[c], nullptr, false);
        else o[t.columns[c]] = r[c];
      }
      arr.push_back(o);
    }
    out << arr.dump(2) << "\n";
    return;
  }
  // Table: columns wider than their share of the terminal are cut with "…".
  std::vector<size_t> w(nc);
  for (size_t c = 0; c < nc; ++c) w[c] = t.columns[c].size();
  for (const auto& r : t.rows)
    for (size_t c = 0; c < nc; ++c) w[c] = std::max(w[c], r[c] == kNullCell ? size_t{4} : r[c].size());
  int term = terminal_width();
  if (term > 0 && nc > 0) {
    size_t total = 0;
    for (size_t x : w) total += x + 2;
    size_t cap = std::max<size_t>(8, static_cast<size_t>(term) / nc);
    if (total > static_cast<size_t>(term))
      for (auto& x : w) x = std::min(x, cap);
  }
  auto cell = [&](const std::string& raw, size_t c, bool right) {
    const std::string& s = raw == kNullCell ? std::string("NULL") : raw;
    std::string v = s.size() > w[c] ? s.substr(0, w[c] - 1) + "~" : s;
    std::string pad(w[c] - v.size(), ' ');
    return right ? pad + v : v + pad;
  };
  for (size_t c = 0; c < nc; ++c) out << (c ? "  " : "") << cell(t.columns[c], c, false);
  out << "\n";
  for (size_t c = 0; c < nc; ++c) out << (c ? "  " : "") << std::string(w[c], '-');
  out << "\n";
  for (const auto& r : t.rows) {
    for (size_t c = 0; c < nc; ++c)
      out << (c ? "  " : "") << cell(r[c], c, c < t.numeric.size() && t.numeric[c]);
    out << "\n";
  }
}

void print_query(sqlite3* db, const std::string& sql, Format format, std::ostream& out) {
  const char* tail = sql.c_str();
  Table t;
  bool any = false;
  while (tail && *tail) {
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(db, tail, -1, &st, &tail) != SQLITE_OK)
      throw Error(Status::database(std::string("SQL error: ") + sqlite3_errmsg(db)));
    if (!st) continue;  // whitespace or comment
    Table cur;
    int nc = sqlite3_column_count(st);
    for (int c = 0; c < nc; ++c) cur.columns.push_back(sqlite3_column_name(st, c));
    cur.numeric.assign(nc, true);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
      std::vector<std::string> row(nc);
      for (int c = 0; c < nc; ++c) {
        switch (sqlite3_column_type(st, c)) {
          case SQLITE_NULL: row[c] = kNullCell; break;
          case SQLITE_INTEGER: row[c] = std::to_string(sqlite3_column_int64(st, c)); break;
          case SQLITE_FLOAT: row[c] = format_real(sqlite3_column_double(st, c)); break;
          case SQLITE_BLOB: {
            int n = sqlite3_column_bytes(st, c);
            cur.numeric[c] = false;
            if (format == Format::kCsv) {
              static const char* hex = "0123456789abcdef";
              const auto* p = static_cast<const unsigned char*>(sqlite3_column_blob(st, c));
              std::string h;
              for (int i = 0; i < n; ++i) h += {hex[p[i] >> 4], hex[p[i] & 15]};
              row[c] = h;
            } else {
              row[c] = "<blob " + std::to_string(n) + " bytes>";
            }
            break;
          }
          default:
            cur.numeric[c] = false;
            row[c] = reinterpret_cast<const char*>(sqlite3_column_text(st, c));
        }
      }
      cur.rows.push_back(std::move(row));
    }
    if (rc != SQLITE_DONE) {
      std::string msg = sqlite3_errmsg(db);
      sqlite3_finalize(st);
      throw Error(Status::database("SQL error: " + msg));
    }
    sqlite3_finalize(st);
    if (nc > 0) {
      t = std::move(cur);
      any = true;
    }
  }
  if (any) print_table(t, format, out);
}

}  // namespace trialdb::cli
