#include "src/output.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <map>
#include <set>
#include <stdexcept>

#include "schema/status.h"
#include "schema/utf8.h"

namespace trialdb::cli {

namespace {
bool g_full_width = false;  // set_full_width: tables never cut a column to the terminal
}  // namespace

void set_full_width() { g_full_width = true; }

std::string join(const std::vector<std::string>& parts, const std::string& sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); i++) out += (i ? sep : "") + parts[i];
  return out;
}

std::vector<std::string> json_keys(const std::vector<std::string>& names) {
  const std::set<std::string> columns(names.begin(), names.end());
  std::set<std::string> used;
  std::map<std::string, int> last_suffix;  // per repeated name: the suffix it last took
  std::vector<std::string> keys;
  for (const std::string& name : names) {
    std::string key = name;
    if (used.count(key)) {
      int& n = last_suffix.try_emplace(name, 1).first->second;
      do key = name + "_" + std::to_string(++n);
      while (columns.count(key) || used.count(key));
    }
    used.insert(key);
    keys.push_back(std::move(key));
  }
  return keys;
}

std::string counted(uint64_t n, const std::string& singular, const std::string& plural) {
  return std::to_string(n) + " " + (n == 1 ? singular : plural.empty() ? singular + "s" : plural);
}

int terminal_width() {
  if (g_full_width || !isatty(STDOUT_FILENO)) return 0;
  struct winsize w;
  if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &w) == 0 && w.ws_col > 0) return w.ws_col;
  return 80;
}

int terminal_columns(int fd) {
  if (!isatty(fd)) return 0;
  if (const char* env = std::getenv("COLUMNS")) {
    char* end = nullptr;
    const long n = std::strtol(env, &end, 10);
    if (end != env && *end == '\0' && n > 0 && n < 100000) return static_cast<int>(n);
  }
  struct winsize w;
  if (ioctl(fd, TIOCGWINSZ, &w) == 0 && w.ws_col > 0) return w.ws_col;
  return 80;
}

namespace {

constexpr unsigned char kDel = 0x7f;
constexpr unsigned char kFirstPrintable = 0x20;
constexpr char kHexDigits[] = "0123456789abcdef";
constexpr int kJsonIndent = 2;

void append_hex_byte(std::string* out, const char* prefix, unsigned char c) {
  *out += prefix;
  *out += kHexDigits[c >> 4];
  *out += kHexDigits[c & 15];
}

// A numeric cell's text as JSON: the number, or json_number's strings for inf/nan spellings.
nlohmann::ordered_json numeric_cell(const std::string& text) {
  nlohmann::ordered_json j = nlohmann::ordered_json::parse(text, nullptr, false);
  if (!j.is_discarded()) return j;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (!text.empty() && *end == '\0') return json_number(v);
  return text;
}

}  // namespace

std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < kFirstPrintable || c == kDel) {
      append_hex_byte(&out, "\\x", c);
      ++i;
    } else if (c < 0x80) {
      out += static_cast<char>(c);
      ++i;
    } else if (size_t n = utf8_sequence_length(text, i); n == 0) {
      append_hex_byte(&out, "\\x", c);
      ++i;
    } else if (n == 2 && c == 0xC2 && static_cast<unsigned char>(text[i + 1]) < 0xA0) {
      append_hex_byte(&out, "\\u00", static_cast<unsigned char>(text[i + 1]));  // C1: U+0080..U+009F
      i += n;
    } else {
      out.append(text.substr(i, n));
      i += n;
    }
  }
  return out;
}

std::string csv_cell(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) {
    if (c == '"') q += '"';
    q += c;
  }
  return q + "\"";
}

namespace {
int g_real_digits = 0;  // 0: the shortest text that reads back as the same double
}  // namespace

void set_real_digits(int digits) { g_real_digits = digits; }

std::string shortest_real(double d) {
  char buf[48];
  if (!std::isfinite(d)) {
    std::snprintf(buf, sizeof buf, "%g", d);
    return buf;
  }
  // The shortest digits that read back as d (std::to_chars without a precision) bound the
  // precision from below: no "%.*g" text of fewer significant digits reads back as d. The one of
  // that many may still not (around a power of two the interval of d is lopsided): the next then.
  auto text = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::scientific);
  const int digits =
      static_cast<int>(std::count_if(buf, std::find(buf, text.ptr, 'e'), [](char c) { return c >= '0' && c <= '9'; }));
  for (int precision = std::max(kMinRealPrecision, digits);; ++precision) {
    text = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::general, precision);
    double back = 0;
    std::from_chars(buf, text.ptr, back);
    if (back == d || precision >= kMaxRealPrecision) return std::string(buf, text.ptr);
  }
}

std::string format_real(double d) {
  if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
  if (g_real_digits > 0) {
    char b[48];
    std::snprintf(b, sizeof b, "%.*g", g_real_digits, d);
    return b;
  }
  return shortest_real(d);
}

nlohmann::ordered_json json_number(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
  return v;
}

std::string json_text(const nlohmann::ordered_json& j) {
  return j.dump(kJsonIndent, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

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
    const std::vector<std::string> keys = json_keys(t.columns);
    nlohmann::ordered_json arr = nlohmann::ordered_json::array();
    for (const auto& r : t.rows) {
      nlohmann::ordered_json o = nlohmann::ordered_json::object();
      for (size_t c = 0; c < nc; ++c) {
        bool num = c < t.numeric.size() && t.numeric[c];
        if (r[c] == kNullCell) o[keys[c]] = nullptr;
        else if (num) o[keys[c]] = numeric_cell(r[c]);
        else o[keys[c]] = r[c];
      }
      arr.push_back(std::move(o));
    }
    out << json_text(arr) << "\n";
    return;
  }
  // Table: every cell printable (names may hold any byte); columns wider than their share of the
  // terminal are cut with "~". A cell of printable ASCII (nearly all) is shown from the table
  // itself; the lines are written a block at a time, not a piece of a cell at a time.
  std::deque<std::string> escaped;
  auto shown = [&](const std::string& s) -> std::string_view {
    if (s == kNullCell) return "NULL";
    if (std::all_of(s.begin(), s.end(), [](char c) { return c >= kFirstPrintable && c < kDel; })) return s;
    return escaped.emplace_back(printable(s));
  };
  std::vector<std::string_view> columns(nc);
  std::vector<std::string_view> cells;  // row by row
  cells.reserve(t.rows.size() * nc);
  for (size_t c = 0; c < nc; ++c) columns[c] = shown(t.columns[c]);
  for (const auto& r : t.rows)
    for (size_t c = 0; c < nc; ++c) cells.push_back(shown(r[c]));
  std::vector<size_t> w(nc);
  for (size_t c = 0; c < nc; ++c) w[c] = columns[c].size();
  for (size_t i = 0; i < cells.size(); ++i) w[i % nc] = std::max(w[i % nc], cells[i].size());
  int term = terminal_width();
  if (term > 0 && nc > 0) {
    size_t total = 0;
    for (size_t x : w) total += x + 2;
    size_t cap = std::max<size_t>(8, static_cast<size_t>(term) / nc);
    if (total > static_cast<size_t>(term))
      for (auto& x : w) x = std::min(x, cap);
  }
  std::string text;
  auto cell = [&](std::string_view s, size_t c, bool right) {
    if (c) text += "  ";
    const bool cut = s.size() > w[c];
    const size_t shown_size = cut ? w[c] : s.size();
    if (right) text.append(w[c] - shown_size, ' ');
    if (cut) text.append(s.substr(0, w[c] - 1)) += '~';
    else text.append(s);
    if (!right) text.append(w[c] - shown_size, ' ');
  };
  constexpr size_t kWriteBlock = 1 << 16;
  for (size_t c = 0; c < nc; ++c) cell(columns[c], c, false);
  text += '\n';
  for (size_t c = 0; c < nc; ++c) {
    if (c) text += "  ";
    text.append(w[c], '-');
  }
  text += '\n';
  for (size_t i = 0; i < cells.size(); ++i) {
    const size_t c = i % nc;
    cell(cells[i], c, c < t.numeric.size() && t.numeric[c]);
    if (c + 1 == nc) text += '\n';
    if (text.size() >= kWriteBlock) out.write(text.data(), static_cast<std::streamsize>(text.size())), text.clear();
  }
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
}

}  // namespace trialdb::cli
