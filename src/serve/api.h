// The JSON endpoints of `trialdb serve` (docs/SERVE.md), one function per endpoint, each reading
// only the public views through a ReadConnection. They take the URL's query parameters and
// return the JSON document to send; a bad parameter throws Error (kInvalidInput, answered 400).
#pragma once
#include <sqlite3.h>

#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "src/serve/connection_pool.h"
#include "src/serve/read_connection.h"

namespace trialdb::serve {

using Params = std::multimap<std::string, std::string>;  // as httplib::Params
using Json = nlohmann::ordered_json;

// Limits of the SQL endpoint (also reported by /api/info).
constexpr int kSqlRowLimit = 10000;
constexpr int kSqlTimeLimitMs = 5000;
// Steps given as parameters stay within this, so they convert to int64 exactly.
constexpr double kStepBound = 9e18;
// No other endpoint runs longer than this.
constexpr int kQueryTimeLimitMs = 20000;

Json api_info(ReadConnection& c, const std::vector<std::string>& databases);
Json api_status(ReadConnection& c);
Json api_trials(ReadConnection& c, const Params& p);
Json api_tensors(ReadConnection& c, const Params& p);
// /api/scalars writes its JSON text directly: its answer is mostly numbers (a chart's lines), and
// building a document of them first costs more than writing them. Both read lines not yet kept
// on two threads when `pool` has a connection free (api_scalars.cc).
std::string api_scalars(ReadConnection& c, const Params& p, ConnectionPool* pool = nullptr);
Json api_scalars_at(ReadConnection& c, const Params& p, ConnectionPool* pool = nullptr);
Json api_distribution(ReadConnection& c, const Params& p);
Json api_histogram(ReadConnection& c, const Params& p);
Json api_heatmap(ReadConnection& c, const Params& p);
Json api_findings(ReadConnection& c, const Params& p);
Json api_sql(ReadConnection& c, const Params& p);

// A document as the JSON text sent (compact; invalid UTF-8 in strings replaced).
std::string json_text(const Json& j);

// Parameter helpers (api_common.cc).
std::vector<std::string> param_all(const Params& p, const std::string& key);
std::string param(const Params& p, const std::string& key, const std::string& fallback = "");
double param_number(const Params& p, const std::string& key, double fallback, double lo, double hi);
// The steps asked for by from/to (inclusive); by default all of them.
struct StepRange {
  int64_t from = std::numeric_limits<int64_t>::min(), to = std::numeric_limits<int64_t>::max();
};
StepRange step_range(const Params& p);
// A result column as JSON: integers and reals as numbers (non-finite ones as the strings JSON
// output always uses), text as strings, blobs as "<blob N bytes>", NULL as null.
Json column_json(sqlite3_stmt* st, int col);

}  // namespace trialdb::serve
