// api.h: the parameter helpers and the column-to-JSON conversion every endpoint shares.
#include <cmath>
#include <string>

#include "schema/status.h"
#include "src/output.h"
#include "src/serve/api.h"

namespace trialdb::serve {

std::string json_text(const Json& j) { return j.dump(-1, ' ', false, Json::error_handler_t::replace); }

std::vector<std::string> param_all(const Params& p, const std::string& key) {
  std::vector<std::string> out;
  auto [from, to] = p.equal_range(key);
  for (auto it = from; it != to; ++it)
    if (!it->second.empty()) out.push_back(it->second);
  return out;
}

std::string param(const Params& p, const std::string& key, const std::string& fallback) {
  auto it = p.find(key);
  return it == p.end() || it->second.empty() ? fallback : it->second;
}

double param_number(const Params& p, const std::string& key, double fallback, double lo, double hi) {
  const std::string text = param(p, key);
  if (text.empty()) return fallback;
  size_t used = 0;
  double v = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || !(v >= lo && v <= hi))
    throw Error(ErrorKind::kInvalidInput, "parameter " + key + "='" + cli::printable(text) + "': give a number from " +
                                              cli::format_real(lo) + " to " + cli::format_real(hi));
  return v;
}

StepRange step_range(const Params& p) {
  StepRange r;
  if (!param(p, "from").empty()) r.from = static_cast<int64_t>(param_number(p, "from", 0, -kStepBound, kStepBound));
  if (!param(p, "to").empty()) r.to = static_cast<int64_t>(param_number(p, "to", 0, -kStepBound, kStepBound));
  return r;
}

Json column_json(sqlite3_stmt* st, int col) {
  switch (sqlite3_column_type(st, col)) {
    case SQLITE_INTEGER: return sqlite3_column_int64(st, col);
    case SQLITE_FLOAT: return cli::json_number(sqlite3_column_double(st, col));
    case SQLITE_TEXT:
      return std::string(reinterpret_cast<const char*>(sqlite3_column_text(st, col)), sqlite3_column_bytes(st, col));
    case SQLITE_BLOB: return "<blob " + std::to_string(sqlite3_column_bytes(st, col)) + " bytes>";
    default: return nullptr;
  }
}

}  // namespace trialdb::serve
