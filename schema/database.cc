#include "schema/database.h"

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>

#include "schema/migrations.h"

namespace trialdb {

const char* schema_sql() {
  static const char* sql =
#include "schema_sql.inc"
      ;
  return sql;
}

bool is_corruption(int sqlite_code) {
  const int primary = sqlite_code & 0xff;
  return primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB;
}

Error corruption_error(const std::string& path, const std::string& detail, int sqlite_code) {
  return Error(Status::database("the database is corrupt (" + detail + ")").at(path), sqlite_code);
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

// "<db>: <what>: <SQLite's message> (SQL: <sql>)", with SQLite's extended code; a corrupt file
// is said to be one, whatever the statement.
Error sql_error(sqlite3* db, std::string_view sql, const std::string& what) {
  std::string msg = db ? sqlite3_errmsg(db) : "out of memory";
  if (db && is_corruption(sqlite3_extended_errcode(db)))
    return corruption_error(db_name(db), msg, sqlite3_extended_errcode(db));
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

Database::Database(const std::string& path, OpenMode mode, const char* vfs) : path_(path), mode_(mode) {
  configure_sqlite_once();
  // NOMUTEX: a connection is only ever used by one thread at a time, so the mutex every API call
  // would take buys nothing (bench/README.md, "Small tensors").
  int flags = SQLITE_OPEN_NOMUTEX;
  if (mode == OpenMode::kReadOnly) flags |= SQLITE_OPEN_READONLY;
  else flags |= SQLITE_OPEN_READWRITE | (mode == OpenMode::kCreate ? SQLITE_OPEN_CREATE : 0);
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
      if (mode == OpenMode::kReadOnly) setup_read_only();
      else setup();
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

bool Database::check_trialdb(bool may_be_new) {
  bool has_version = false;
  int64_t objects = 0;
  {
    Statement q(db_, "SELECT count(*), ifnull(max(type = 'table' AND name = 'schema_version'), 0) FROM sqlite_master");
    if (q.step()) {
      objects = q.int64(0);
      has_version = q.int64(1) != 0;
    }
  }
  if (!has_version) {
    if (may_be_new && objects == 0) return false;
    throw Error(Status::database("not a trialdb database: ingest a trial first" +
                                 std::string(objects ? " (it holds other tables; use a new file)" : ""))
                    .at(path_));
  }
  Statement v(db_, "SELECT max(version) FROM schema_version");
  if (!v.step() || v.is_null(0)) return false;
  const int64_t version = v.int64(0);
  found_version_ = version;
  if (version == kSchemaVersion) return true;
  const std::string is = "database schema version " + std::to_string(version) + " is " +
                         (version > kSchemaVersion ? "newer" : "older") + " than this trialdb's (" +
                         std::to_string(kSchemaVersion) + ")";
  if (!can_upgrade(version))
    throw Error(Status::database(is + "; ingest the trials into a new database").at(path_));
  if (mode_ == OpenMode::kReadOnly && !readable_without_upgrade(version))
    throw Error(Status::database(is + "; a command that writes (e.g. trialdb ingest) upgrades it").at(path_));
  return true;
}

void Database::quick_check() {
  Statement q(db_, "PRAGMA quick_check(1)");
  if (!q.step()) return;
  const std::string verdict = q.text(0);
  if (verdict != "ok") throw corruption_error(path_, "quick_check: " + verdict);
}

void Database::setup_read_only() {
  // Defensive: the few ways SQL could still alter a file outside of ordinary writes (the
  // writable_schema pragma, shadow tables) are off, like every write on a read-only connection.
  sqlite3_db_config(db_, SQLITE_DBCONFIG_DEFENSIVE, 1, nullptr);
  try {
    exec("PRAGMA cache_size=-32768");
    check_trialdb(false);
  } catch (const Error& e) {
    // A WAL database is read through its -shm file; when nobody has it open the file is gone,
    // and a reader who may not create it in the folder cannot read the database at all.
    const int code = e.sqlite_code() & 0xff;
    if ((code != SQLITE_READONLY && code != SQLITE_CANTOPEN) || std::filesystem::exists(path_ + "-shm")) throw;
    throw Error(Status::database("cannot read this WAL-mode database read-only: its -shm file does not exist and "
                                 "this user may not create it in the folder (" + e.status().cause() +
                                 "); run the command where the folder is writable, or while the database is open "
                                 "elsewhere (e.g. an ingest)")
                    .at(path_),
                e.sqlite_code());
  }
}

void Database::setup() {
  // Checks before the first pragma that may write (journal_mode): a file that is not ours, or of
  // another version, is refused unchanged. The ingest (kCreate), which writes the most, also
  // refuses a corrupt file; quick_check reads every page, so other opens rely on SQLite reporting
  // the damage a query meets (is_corruption).
  const bool exists = check_trialdb(mode_ == OpenMode::kCreate);
  if (exists && mode_ == OpenMode::kCreate) quick_check();
  // Page size: SQLite keeps a row whose payload fits in a page inside the page, so rows a little
  // over half a page each waste the rest of one. 4 KiB pages confine that waste to blobs of
  // 2-4 KiB; larger pages move it to common gradient sizes (16 KiB pages: 8 KiB blobs of
  // 2,048 floats; 64 KiB pages: 16k-float tensors), although they write huge tensors faster
  // (bench/README.md, "Database size" and "Large-tensor ingest").
  // Checkpointing every 128 MiB rather than SQLite's default 4 MiB keeps fsyncs off the critical
  // path (and WalCheckpointer moves bulk ingests' checkpoints off the writer's thread altogether).
  exec("PRAGMA page_size=4096");
  // Removing a trial frees its pages without reading them (trial_edit.h): with auto_vacuum
  // INCREMENTAL, SQLite finds the next page of a blob's overflow chain in its pointer map rather
  // than on the page itself, so `rm` of a 1 GB trial reads a few hundred pages, not 1 GB
  // (bench/README.md, "Maintenance"). Only a new file takes the setting; `trialdb compact` gives
  // it to an older one. Nothing runs incremental_vacuum: freed pages stay on the freelist for
  // the next ingest, and commits never move pages.
  exec("PRAGMA auto_vacuum=INCREMENTAL");
  // Debian builds SQLite with secure_delete on, which overwrites every freed page with zeros:
  // 1 GB written to remove a 1 GB trial. FAST zeroes only what costs no extra I/O; the bytes of
  // freed overflow pages stay in the file until reused or `trialdb compact` (README.md).
  exec("PRAGMA secure_delete=FAST");
  exec("PRAGMA journal_mode=WAL");
  exec("PRAGMA synchronous=NORMAL");
  exec("PRAGMA wal_autocheckpoint=" + std::to_string(kWalAutoCheckpointFrames));
  exec("PRAGMA journal_size_limit=67108864");
  exec("PRAGMA foreign_keys=OFF");
  // A write transaction touches one leaf of value per tensor (the table is clustered by tensor):
  // those pages must stay in the cache, or SQLite spills them to the WAL mid-transaction and
  // rewrites (and re-checksums) every later frame at commit. The cache grows only as needed.
  exec("PRAGMA cache_size=-32768");
  exec("BEGIN IMMEDIATE");
  try {
    exec(schema_sql());
    const bool versioned = [&] {
      Statement v(db_, "SELECT count(*) FROM schema_version");   // finalized before the DDL below
      return v.step() && v.int64(0) > 0;
    }();
    if (!versioned) {
      exec("INSERT INTO schema_version(version) VALUES (" + std::to_string(kSchemaVersion) + ")");
      install_planner_stats();
    } else if (found_version_ < kSchemaVersion) {
      upgrade(*this, found_version_);   // migrations.h
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
      {"value_distribution", "value_distribution", "10000000 1000 1 1 1"},
      {"value_histogram", nullptr, "10000000"},
      {"bucket_octave", nullptr, "2047"},
      {"bucket_octave", "bucket_octave_by_first", "2047 1"},
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
    if (is_corruption(code)) throw corruption_error(path_, msg, code);
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
