#include "schema/database.h"

#include <chrono>
#include <string>
#include <thread>

namespace trialdb {

const char* schema_sql() {
  static const char* sql =
#include "schema_sql.inc"
      ;
  return sql;
}

namespace {
// The database a connection has open, for messages: its file, or ":memory:".
std::string db_name(sqlite3* db) {
  const char* f = db ? sqlite3_db_filename(db, "main") : nullptr;
  return f && *f ? f : ":memory:";
}

// SQL as a message quotes it: whitespace runs folded to one space, cut after ~80 characters.
std::string abbreviate_sql(std::string_view sql) {
  constexpr size_t kMax = 80;
  std::string out;
  bool space = false;
  for (char c : sql) {
    const bool ws = c == ' ' || c == '\n' || c == '\t' || c == '\r';
    if (ws) {
      space = !out.empty();
      continue;
    }
    if (space) out += ' ';
    space = false;
    out += c;
    if (out.size() >= kMax) return out + "...";
  }
  return out;
}

// "<db>: <what>: <SQLite's message> (SQL: <sql>)", with SQLite's extended code.
Error sql_error(sqlite3* db, std::string_view sql, const std::string& what) {
  std::string msg = db ? sqlite3_errmsg(db) : "out of memory";
  std::string cause = (what.empty() ? "" : what + ": ") + msg + " (SQL: " + abbreviate_sql(sql) + ")";
  return Error(Status::database(std::move(cause)).at(db_name(db)), db ? sqlite3_extended_errcode(db) : SQLITE_NOMEM);
}
// Once per process, before SQLite initialises: connections are never shared between threads
// (MULTITHREAD drops the per-call mutexes) and nobody reads SQLite's memory statistics, whose
// global mutex every allocation takes (bench/README.md, "Small tensors"). If the host already
// initialised SQLite, the
// calls fail harmlessly and its settings stay.
void configure_sqlite_once() {
  static const bool configured = [] {
    sqlite3_config(SQLITE_CONFIG_MULTITHREAD);
    sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
    return true;
  }();
  (void)configured;
}

}  // namespace

Database::Database(const std::string& path, OpenMode mode, const char* vfs) : path_(path) {
  configure_sqlite_once();
  // NOMUTEX: a connection is only ever used by one thread at a time, so the mutex every API call
  // would take buys nothing (bench/README.md, "Small tensors").
  int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | (mode == OpenMode::kCreate ? SQLITE_OPEN_CREATE : 0);
  if (sqlite3_open_v2(path.c_str(), &db_, flags, vfs) != SQLITE_OK) {
    std::string msg = db_ ? sqlite3_errmsg(db_) : "out of memory";
    sqlite3_close(db_);
    db_ = nullptr;
    throw Error(Status::database("cannot open database: " + msg).at(path));
  }
  sqlite3_busy_timeout(db_, kBusyTimeoutMs);
  // Several processes may open a new file at once; SQLite answers some of the first-use steps
  // (the switch to WAL, reading a schema another process is writing) with SQLITE_BUSY without
  // waiting in the busy handler. Every step is idempotent, so the whole set-up is retried.
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  for (;;) {
    try {
      setup();
      return;
    } catch (const Error& e) {
      int code = e.sqlite_code() & 0xff;
      if ((code != SQLITE_BUSY && code != SQLITE_LOCKED) || std::chrono::steady_clock::now() > until) {
        sqlite3_close_v2(db_);
        db_ = nullptr;
        throw;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
}

void Database::setup() {
  // Page size: SQLite keeps a row whose payload fits in a page inside the page, so rows a little
  // over half a page each waste the rest of one. 4 KiB pages confine that waste to blobs of
  // 2-4 KiB; larger pages move it to common gradient sizes (16 KiB pages: 8 KiB blobs of
  // 2,048 floats; 64 KiB pages: 16k-float tensors), although they write huge tensors faster
  // (bench/README.md, "Database size" and "Large-tensor ingest").
  // Checkpointing every 128 MiB rather than SQLite's default 4 MiB keeps fsyncs off the critical
  // path (and WalCheckpointer moves bulk ingests' checkpoints off the writer's thread altogether).
  exec("PRAGMA page_size=4096");
  exec("PRAGMA journal_mode=WAL");
  exec("PRAGMA synchronous=NORMAL");
  exec("PRAGMA wal_autocheckpoint=" + std::to_string(kWalAutoCheckpointFrames));
  exec("PRAGMA journal_size_limit=67108864");
  exec("PRAGMA foreign_keys=OFF");
  // A write transaction touches one leaf of value per tensor (the table is clustered by tensor):
  // those pages must stay in the cache, or SQLite spills them to the WAL mid-transaction and
  // rewrites (and re-checksums) every later frame at commit. The cache grows only as needed.
  exec("PRAGMA cache_size=-32768");
  // Version check before touching the DDL so a newer file is not altered by an older binary.
  bool has_version = false;
  {
    Statement q(db_, "SELECT 1 FROM sqlite_master WHERE type='table' AND name='schema_version'");
    has_version = q.step();
  }
  if (has_version) {
    Statement v(db_, "SELECT max(version) FROM schema_version");
    if (v.step() && !v.is_null(0) && v.int64(0) != kSchemaVersion)
      throw Error(Status::database("database schema version " + std::to_string(v.int64(0)) + " is " +
                                   (v.int64(0) > kSchemaVersion ? "newer" : "older") + " than this trialdb's (" +
                                   std::to_string(kSchemaVersion) + "); ingest the trials into a new database")
                      .at(path_));
  }
  exec("BEGIN IMMEDIATE");
  try {
    exec(schema_sql());
    Statement v(db_, "SELECT count(*) FROM schema_version");
    v.step();
    if (v.int64(0) == 0) {
      exec("INSERT INTO schema_version(version) VALUES (" + std::to_string(kSchemaVersion) + ")");
      install_planner_stats();
    }
    exec("COMMIT");
    exec("ANALYZE sqlite_schema");   // (re)load the statistics into this connection
  } catch (...) {
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    throw;
  }
}

// Statistics shaped like a large trial (schema.sql explains why). Each row: index, then the
// table's row count and the average rows per distinct prefix of the index's columns.
void Database::install_planner_stats() {
  exec("ANALYZE sqlite_schema");   // creates sqlite_stat1 if needed
  exec("DELETE FROM sqlite_stat1");
  static const char* kStats[][3] = {
      {"trial", "sqlite_autoindex_trial_1", "10 1"},
      {"worker", "sqlite_autoindex_worker_1", "100 10 1"},
      {"step", "step", "1000000 100000 1"},
      {"step_worker", "step_worker", "2000000 200000 2 1"},
      {"tensor", "sqlite_autoindex_tensor_1", "100000 10000 1"},
      {"tensor", "tensor_by_name", "100000 10"},
      {"collection", "sqlite_autoindex_collection_1", "100 10 1"},
      {"collection_member", "collection_member", "200000 2000 1"},
      {"collection_member", "collection_member_by_tensor", "200000 2"},
      {"reduction_kind", nullptr, "18"},
      {"dtype_name", nullptr, "16"},
      {"value", "value", "10000000 1000 1 1 1"},   // WITHOUT ROWID: the key is named after the table
      {"value", "value_by_step", "10000000 1000000 100"},
      {"value_blob", nullptr, "10000000"},
      {"ingested_file", "ingested_file", "1000000 100000 1"},
      {"ingest_error", nullptr, "100"},
  };
  Statement ins(db_, "INSERT INTO sqlite_stat1(tbl, idx, stat) VALUES (?, ?, ?)");
  for (const auto& row : kStats) {
    ins.bind(1, std::string_view(row[0]));
    if (row[1]) ins.bind(2, std::string_view(row[1]));
    else ins.bind_null(2);
    ins.bind(3, std::string_view(row[2])).run();
  }
}

Database::~Database() { sqlite3_close_v2(db_); }

void Database::exec(std::string_view sql) {
  std::string s(sql);
  char* err = nullptr;
  if (sqlite3_exec(db_, s.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = err ? err : sqlite3_errmsg(db_);
    int code = sqlite3_extended_errcode(db_);
    sqlite3_free(err);
    throw Error(Status::database(msg + " (SQL: " + abbreviate_sql(sql) + ")").at(path_), code);
  }
}

Statement::Statement(sqlite3* db, std::string_view sql) : db_(db) {
  if (sqlite3_prepare_v3(db, sql.data(), static_cast<int>(sql.size()), SQLITE_PREPARE_PERSISTENT,
                         &stmt_, nullptr) != SQLITE_OK)
    throw sql_error(db, sql, "cannot prepare");
}
Statement::~Statement() { sqlite3_finalize(stmt_); }

Error Statement::error(const std::string& what) const {
  const char* sql = sqlite3_sql(stmt_);
  return sql_error(db_, sql ? sql : "", what);
}
void Statement::bind_failed(int i) const { throw error("cannot bind parameter " + std::to_string(i)); }

Statement& Statement::bind(int i, int64_t v) {
  if (sqlite3_bind_int64(stmt_, i, v) != SQLITE_OK) bind_failed(i);
  return *this;
}
Statement& Statement::bind(int i, double v) {
  if (sqlite3_bind_double(stmt_, i, v) != SQLITE_OK) bind_failed(i);
  return *this;
}
Statement& Statement::bind(int i, std::string_view v) {
  if (sqlite3_bind_text64(stmt_, i, v.data(), v.size(), SQLITE_TRANSIENT, SQLITE_UTF8) != SQLITE_OK) bind_failed(i);
  return *this;
}
Statement& Statement::bind_blob(int i, const void* p, size_t n) {
  if (sqlite3_bind_blob64(stmt_, i, n ? p : "", n, SQLITE_TRANSIENT) != SQLITE_OK) bind_failed(i);
  return *this;
}
Statement& Statement::bind_text_static(int i, std::string_view v) {
  if (sqlite3_bind_text64(stmt_, i, v.data(), v.size(), SQLITE_STATIC, SQLITE_UTF8) != SQLITE_OK) bind_failed(i);
  return *this;
}

Statement& Statement::bind_blob_static(int i, const void* p, size_t n) {
  if (sqlite3_bind_blob64(stmt_, i, n ? p : "", n, SQLITE_STATIC) != SQLITE_OK) bind_failed(i);
  return *this;
}
Statement& Statement::bind_null(int i) {
  if (sqlite3_bind_null(stmt_, i) != SQLITE_OK) bind_failed(i);
  return *this;
}
bool Statement::step() {
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  Error e = error("");   // before the reset, which may change the connection's message
  sqlite3_reset(stmt_);
  throw e;
}
void Statement::reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}
std::string Statement::text(int col) const {
  const unsigned char* p = sqlite3_column_text(stmt_, col);
  return p ? std::string(reinterpret_cast<const char*>(p), sqlite3_column_bytes(stmt_, col)) : std::string();
}

Transaction::Transaction(Database& db) : db_(db) { db_.exec("BEGIN IMMEDIATE"); }
Transaction::~Transaction() {
  if (!done_) sqlite3_exec(db_.handle(), "ROLLBACK", nullptr, nullptr, nullptr);
}
void Transaction::commit() {
  db_.exec("COMMIT");
  done_ = true;
}

}  // namespace trialdb
