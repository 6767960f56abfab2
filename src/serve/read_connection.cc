// read_connection.h: opening the databases for serving, and what a request may do on them.
#include "src/serve/read_connection.h"

#include <algorithm>
#include <cstring>

#include "schema/reduction_lines.h"
#include "src/open_db.h"

namespace trialdb::serve {

namespace {

// How long a request waits for a writer's lock before it is answered "locked" (a one-shot
// ingest holds it until it commits; the page says so and tries again).
constexpr int kBusyWaitMs = 200;
// Each database is read through a memory map of up to this many bytes (SQLite caps it at 2 GB):
// a page is then read where the operating system's page cache holds it, instead of being copied
// into SQLite's own cache, which for a chart's first read of its value rows is a fifth of its
// cost (bench/README.md, "trialdb serve").
constexpr int64_t kMmapBytes = int64_t{1} << 30;
// SQLite calls the progress handler every this many virtual machine instructions.
constexpr int kProgressInstructions = 1000;

// Read-only pragmas the SQL box may use; any other pragma, and any of these given a value, is
// refused.
constexpr const char* kReadingPragmas[] = {"table_info", "table_xinfo", "table_list",    "index_list",
                                           "index_info", "index_xinfo", "function_list", "collation_list"};

// The authorizer: reading is allowed, everything else refused. SQLite asks it while preparing
// every statement on the connection (the server's own are reads too).
int authorize(void*, int action, const char* arg1, const char* arg2, const char*, const char*) {
  switch (action) {
    case SQLITE_SELECT:
    case SQLITE_READ:
    case SQLITE_RECURSIVE: return SQLITE_OK;
    case SQLITE_FUNCTION: return arg2 && strcasecmp(arg2, "load_extension") == 0 ? SQLITE_DENY : SQLITE_OK;
    // Connecting a table-valued function (json_each, histogram_each, pragma_table_info, ...) on
    // its first use on the connection parses its declaration, which SQLite checks as an update of
    // sqlite_master's columns. A real update of it is refused by SQLite itself (no
    // writable_schema) and by query_only.
    case SQLITE_UPDATE: return arg1 && strcasecmp(arg1, "sqlite_master") == 0 ? SQLITE_OK : SQLITE_DENY;
    case SQLITE_PRAGMA:
      if (arg2 != nullptr || arg1 == nullptr) return SQLITE_DENY;
      for (const char* p : kReadingPragmas)
        if (strcasecmp(arg1, p) == 0) return SQLITE_OK;
      return SQLITE_DENY;
    default: return SQLITE_DENY;
  }
}

std::string quoted(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("''") : std::string(1, c);
  return q + "'";
}

std::string schema_name(size_t i) { return i == 0 ? "main" : "db" + std::to_string(i); }

}  // namespace

const std::vector<std::string>& merged_views() {
  static const std::vector<std::string> views = {"trials",          "steps",         "tensors",
                                                 "collections",     "tensor_values", "reductions",
                                                 "distributions",   "histograms",    "histogram_buckets",
                                                 "value_locations", "workers",       "collection_definitions",
                                                 "ingest_errors",   "rule_findings"};
  return views;
}

ReadConnection::ReadConnection(const std::vector<std::string>& paths) {
  db_ = cli::open_db(paths.at(0), OpenMode::kReadOnly);
  sqlite3* db = db_->handle();
  for (size_t i = 0; i < paths.size(); ++i) schemas_.push_back(schema_name(i));
  for (size_t i = 1; i < paths.size(); ++i) {
    cli::open_db(paths[i],
                 OpenMode::kReadOnly);  // the same checks as the main file (a trialdb database of this version)
    db_->exec("ATTACH " + quoted(paths[i]) + " AS " + schema_name(i));
  }
  // Each view name: the union of the schemas that have it, as a TEMP view (searched before main).
  for (const std::string& view : merged_views()) {
    std::vector<std::string> parts;
    for (size_t i = 0; i < paths.size(); ++i) {
      Statement has(db, "SELECT count(*) FROM " + schema_name(i) + ".sqlite_master WHERE type = 'view' AND name = ?1");
      has.bind(1, view);
      if (has.step() && has.int64(0) > 0) parts.push_back("SELECT * FROM " + schema_name(i) + "." + view);
    }
    if (parts.empty()) continue;
    views_.push_back(view);
    if (paths.size() == 1) continue;
    std::string sql = "CREATE TEMP VIEW " + view + " AS ";
    for (size_t i = 0; i < parts.size(); ++i) sql += (i ? " UNION ALL " : "") + parts[i];
    db_->exec(sql);
  }
  register_reduction_row_function(db);
  sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0, nullptr);
  for (const std::string& schema : schemas_)
    db_->exec("PRAGMA " + schema + ".mmap_size = " + std::to_string(kMmapBytes));
  db_->exec("PRAGMA query_only = 1");
  sqlite3_busy_timeout(db, kBusyWaitMs);
  sqlite3_set_authorizer(db, authorize, nullptr);
  sqlite3_progress_handler(db, kProgressInstructions, on_progress, this);
}

ReadConnection::~ReadConnection() = default;

bool ReadConnection::has_view(const std::string& name) const {
  return std::find(views_.begin(), views_.end(), name) != views_.end();
}

void ReadConnection::set_time_limit(std::chrono::milliseconds limit) {
  deadline_ = std::chrono::steady_clock::now() + limit;
}

int ReadConnection::on_progress(void* self) { return static_cast<ReadConnection*>(self)->deadline_passed() ? 1 : 0; }

}  // namespace trialdb::serve
