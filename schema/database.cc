#include "schema/database.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "schema/migrations.h"
#include "schema/page_size_policy.h"

namespace trialdb {

const char* schema_sql() {
  static const char* sql =
#include "schema_sql.inc"
      ;
  return sql;
}

PageSizeLimits page_size_limits() {
  return {kPageSize, kSqliteLargestPageSize, static_cast<uint64_t>(kPageCacheKiB) * 1024};
}

void set_page_cache_kib(sqlite3* db, int64_t kib) {
  sqlite3_exec(db, ("PRAGMA cache_size=-" + std::to_string(kib)).c_str(), nullptr, nullptr, nullptr);
}

bool is_corruption(int sqlite_code) {
  const int primary = sqlite_code & 0xff;
  return primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB;
}

Error corruption_error(const std::string& path, const std::string& detail, int sqlite_code) {
  return Error(Status::database("the database is corrupt (" + detail + ")").at(path), sqlite_code);
}

namespace {

// Database::set_time_limit: the deadline of each connection that has one. Looked up by the
// progress handler (through a pointer to its entry, which the map keeps in place) and by the
// errors of interrupted statements, which know only the connection.
struct TimeLimitState {
  std::chrono::steady_clock::time_point deadline;
  std::string what;
};
std::mutex g_time_limits_mutex;
std::unordered_map<sqlite3*, TimeLimitState> g_time_limits;
// VM instructions between two looks at the clock: a few microseconds of work.
constexpr int kProgressInstructions = 1000;

int past_deadline(void* state) {
  return std::chrono::steady_clock::now() >= static_cast<const TimeLimitState*>(state)->deadline ? 1 : 0;
}

// "stopped: it ran past the time limit (<what>)" when db's statement was interrupted by its time
// limit, else "".
std::string time_limit_message(sqlite3* db) {
  if (!db || (sqlite3_extended_errcode(db) & 0xff) != SQLITE_INTERRUPT) return "";
  std::lock_guard<std::mutex> lock(g_time_limits_mutex);
  const auto it = g_time_limits.find(db);
  if (it == g_time_limits.end() || std::chrono::steady_clock::now() < it->second.deadline) return "";
  return "stopped: it ran past the time limit (" + it->second.what + ")";
}

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

// Holds a connection's mutex from a call until its error is read. On a connection in SQLite's
// serialized mode (OpenMode::kReadOnlyShared, used by several threads at once) another thread's
// call in between would replace the failed call's error code and message; on any other
// connection there is no mutex and this does nothing. The mutex is recursive: SQLite's own calls
// take it again inside.
class ConnectionMutex {
 public:
  explicit ConnectionMutex(sqlite3* db) : mutex_(db ? sqlite3_db_mutex(db) : nullptr) { sqlite3_mutex_enter(mutex_); }
  ~ConnectionMutex() { sqlite3_mutex_leave(mutex_); }
  ConnectionMutex(const ConnectionMutex&) = delete;
  ConnectionMutex& operator=(const ConnectionMutex&) = delete;

 private:
  sqlite3_mutex* mutex_;
};

// "<db>: <what>: <SQLite's message> (SQL: <sql>)", with SQLite's extended code; a corrupt file
// is said to be one, whatever the statement.
Error sql_error(sqlite3* db, std::string_view sql, const std::string& what) {
  std::string msg = db ? sqlite3_errmsg(db) : "out of memory";
  if (std::string limit = time_limit_message(db); !limit.empty()) msg = std::move(limit);
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

Database::Database(const std::string& path, OpenMode mode, const char* vfs, std::string written_tables,
                   int new_file_page_size)
    : path_(path), mode_(mode), written_tables_(std::move(written_tables)), new_file_page_size_(new_file_page_size) {
  configure_sqlite_once();
  // NOMUTEX: a connection is only ever used by one thread at a time, so the mutex every API call
  // would take buys nothing (bench/README.md, "Small tensors"); kReadOnlyShared asks for it.
  int flags = mode == OpenMode::kReadOnlyShared ? SQLITE_OPEN_FULLMUTEX : SQLITE_OPEN_NOMUTEX;
  if (is_read_only(mode)) flags |= SQLITE_OPEN_READONLY;
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
      if (is_read_only(mode)) setup_read_only();
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
  int64_t objects = 0;
  bool has_version = false, has_tables = false;
  {
    // trialdb's tables, for databases created before trialdb set its application_id.
    Statement q(db_,
                "SELECT count(*), ifnull(max(type = 'table' AND name = 'schema_version'), 0), "
                "ifnull(sum(type = 'table' AND name IN ('trial', 'step', 'tensor', 'value')), 0) = 4 "
                "FROM sqlite_master");
    if (q.step()) {
      objects = q.int64(0);
      has_version = q.int64(1) != 0;
      has_tables = q.int64(2) != 0;
    }
  }
  int64_t application_id = 0;
  {
    Statement q(db_, "PRAGMA application_id");
    if (q.step()) application_id = q.int64(0);
  }
  if ((application_id == 0 || application_id == kApplicationId) && objects == 0 && may_be_new) return false;
  const bool ours = application_id == kApplicationId ? has_version : application_id == 0 && has_version && has_tables;
  if (!ours) {
    std::string what = objects == 0 ? "" : " (it holds other tables; use a new file)";
    if (application_id != 0 && application_id != kApplicationId) {
      char id[16];
      std::snprintf(id, sizeof id, "0x%08x", static_cast<unsigned>(application_id));
      what = std::string(" (its application_id ") + id + " is another program's; use a new file)";
    }
    throw Error(Status::database("not a trialdb database: ingest a trial first" + what).at(path_));
  }
  Statement v(db_, "SELECT max(version) FROM schema_version");
  if (!v.step() || v.is_null(0)) return false;
  const int64_t version = v.int64(0);
  found_version_ = version;
  if (version == kSchemaVersion) return true;
  const std::string is = "database schema version " + std::to_string(version) + " is " +
                         (version > kSchemaVersion ? "newer" : "older") + " than this trialdb's (" +
                         std::to_string(kSchemaVersion) + ")";
  if (!can_upgrade(version)) throw Error(Status::database(is + "; ingest the trials into a new database").at(path_));
  if (is_read_only(mode_) && !readable_without_upgrade(version))
    throw Error(Status::database(is + "; a command that writes upgrades it (e.g. trialdb compact --db " + path_ +
                                 ", or the next ingest)")
                    .at(path_));
  return true;
}

void Database::quick_check() {
  Statement q(db_, "PRAGMA quick_check(1)");
  if (!q.step()) return;
  const std::string verdict = q.text(0);
  if (verdict != "ok") throw corruption_error(path_, "quick_check: " + verdict);
}

void Database::quick_check_tables(const std::string& glob) {
  std::vector<std::string> tables = {"sqlite_schema"};
  {
    Statement q(db_, "SELECT name FROM sqlite_schema WHERE type = 'table' AND name GLOB ?1 ORDER BY name");
    q.bind(1, glob);
    while (q.step()) tables.push_back(q.text(0));
  }
  for (const std::string& table : tables) {
    std::string quoted;
    for (char c : table) quoted += c == '\'' ? "''" : std::string(1, c);
    Statement q(db_, "PRAGMA quick_check('" + quoted + "')");
    if (!q.step()) continue;
    const std::string verdict = q.text(0);
    if (verdict != "ok") throw corruption_error(path_, "quick_check of " + table + ": " + verdict);
  }
}

void Database::check_file_size() {
  // SQLite takes the page count from the header when the header says it is current (its change
  // counter equals its version-valid-for number), and reads a page past the end of a truncated
  // file as zeros: a wrong answer, not an error. Checked inside a read transaction, and only while
  // the WAL is empty, so that no writer or checkpoint is changing the file meanwhile.
  constexpr size_t kHeaderBytes = 100;
  constexpr size_t kPageSizeAt = 16, kChangeCounterAt = 24, kPageCountAt = 28, kValidForAt = 92;
  exec("BEGIN");
  try {
    Statement hold(db_, "SELECT count(*) FROM sqlite_master");
    hold.step();
    std::error_code ec;
    const auto wal_bytes = std::filesystem::file_size(path_ + "-wal", ec);
    // Header and size through SQLite's own file handle: opening the file a second time and
    // closing it would drop this process's POSIX locks on it (and so corrupt it under others).
    sqlite3_file* file = nullptr;
    if ((ec || wal_bytes == 0) && sqlite3_file_control(db_, "main", SQLITE_FCNTL_FILE_POINTER, &file) == SQLITE_OK &&
        file && file->pMethods) {
      unsigned char h[kHeaderBytes];
      sqlite3_int64 file_bytes = 0;
      auto be32 = [&](size_t at) {
        return uint32_t{h[at]} << 24 | uint32_t{h[at + 1]} << 16 | uint32_t{h[at + 2]} << 8 | uint32_t{h[at + 3]};
      };
      if (file->pMethods->xFileSize(file, &file_bytes) == SQLITE_OK &&
          file_bytes >= static_cast<sqlite3_int64>(kHeaderBytes) &&
          file->pMethods->xRead(file, h, kHeaderBytes, 0) == SQLITE_OK) {
        const uint32_t raw_page_size = uint32_t{h[kPageSizeAt]} << 8 | h[kPageSizeAt + 1];
        const uint64_t page_size = raw_page_size == 1 ? kSqliteLargestPageSize : raw_page_size;
        const uint64_t pages = be32(kPageCountAt);
        if (pages > 0 && be32(kChangeCounterAt) == be32(kValidForAt) &&
            static_cast<uint64_t>(file_bytes) < pages * page_size)
          throw corruption_error(path_, "the file has " + std::to_string(file_bytes) + " bytes, its header says " +
                                            std::to_string(pages) + " pages of " + std::to_string(page_size) +
                                            " bytes: it was cut short");
      }
    }
    hold.reset();
    exec("COMMIT");
  } catch (...) {
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    throw;
  }
}

void Database::setup_read_only() {
  // Defensive: the few ways SQL could still alter a file outside of ordinary writes (the
  // writable_schema pragma, shadow tables) are off, like every write on a read-only connection.
  sqlite3_db_config(db_, SQLITE_DBCONFIG_DEFENSIVE, 1, nullptr);
  try {
    set_page_cache_kib(db_, kPageCacheKiB);
    check_trialdb(false);
    check_file_size();
  } catch (const Error& e) {
    // A WAL database is read through its -shm file; when nobody has it open the file is gone,
    // and a reader who may not create it in the folder cannot read the database at all.
    const int code = e.sqlite_code() & 0xff;
    if ((code != SQLITE_READONLY && code != SQLITE_CANTOPEN) || std::filesystem::exists(path_ + "-shm")) throw;
    throw Error(Status::database("cannot read this WAL-mode database read-only: its -shm file does not exist and "
                                 "this user may not create it in the folder (" +
                                 e.status().cause() +
                                 "); run the command where the folder is writable, or while the database is open "
                                 "elsewhere (e.g. an ingest)")
                    .at(path_),
                e.sqlite_code());
  }
}

void Database::setup() {
  // Checks before the first pragma that may write (journal_mode): a file that is not ours, or of
  // another version, is refused unchanged, and so is a damaged one (quick_check reads every page
  // once: bench/README.md, "Opening for writing", measures it against the commands' own work),
  // or only the tables the command writes (written_tables_). Opens that only read rely on the
  // size check and on SQLite reporting the damage a query meets (is_corruption).
  const bool exists = check_trialdb(mode_ == OpenMode::kCreate);
  if (exists) {
    check_file_size();
    if (written_tables_.empty() || found_version_ != kSchemaVersion) quick_check();
    else quick_check_tables(written_tables_);
  }
  // Page size: a blob larger than a page leaves, on average, half a page unused: SQLite keeps its
  // tail on its leaf page, where cells of up to a page do not pack (a leaf holds one tail of
  // 2-4 KiB with 4 KiB pages), or, when the tail would be too large for that, fills its last
  // overflow page only in part (a 1,024-float tensor's 4,116-byte blob: 462 bytes unused with
  // 4 KiB pages). 2 KiB pages halve that against 4 KiB (the CNN profile's value_blob: 10.0 MB
  // unused in its leaves -> 1.7 MB; the transformer's 7.1 -> 3.3 MB); 1 KiB pages would push the
  // value rows (~200 bytes: a WITHOUT ROWID row keeps at most 231 bytes in a 1 KiB page) into
  // overflow pages. What 2 KiB pages cost is per page: an overflow page's 4-byte link and a
  // pointer-map page per 409 pages (auto_vacuum, below), 0.2% more for 1M-float tensors. Larger
  // pages move the waste to common gradient sizes (16 KiB pages: 8 KiB blobs of 2,048 floats took
  // 2x their size), although they write huge tensors faster (bench/README.md, "Database size" and
  // "Large-tensor ingest"), which is why a trial of large tensors gets larger pages
  // (page_size_policy.h: the ingest chooses new_file_page_size). Only a new file takes it.
  exec("PRAGMA page_size=" + std::to_string(new_file_page_size_));
  // Removing a trial frees its pages without reading them (trial_edit.h): with auto_vacuum
  // INCREMENTAL, SQLite finds the next page of a blob's overflow chain in its pointer map rather
  // than on the page itself, so `rm` of a 1 GB trial reads a few hundred pages, not 1 GB
  // (bench/README.md, "Maintenance"). Only a new file takes the setting; `trialdb compact` gives
  // it to an older one. Nothing runs incremental_vacuum: freed pages stay on the freelist for
  // the next ingest, and commits never move pages. Set on an empty file only: setting it on a
  // database (even to its own value) dirties page 1, and every open would change the file.
  const bool empty_file = [&] {
    Statement pages(db_, "PRAGMA page_count");
    return pages.step() && pages.int64(0) == 0;
  }();
  if (empty_file) exec("PRAGMA auto_vacuum=INCREMENTAL");
  // Debian builds SQLite with secure_delete on, which overwrites every freed page with zeros:
  // 1 GB written to remove a 1 GB trial. FAST zeroes only what costs no extra I/O; the bytes of
  // freed overflow pages stay in the file until reused or `trialdb compact` (README.md).
  exec("PRAGMA secure_delete=FAST");
  exec("PRAGMA journal_mode=WAL");
  exec("PRAGMA synchronous=NORMAL");
  // The checkpoint thresholds are bytes, turned into frames of this file's pages (an older file
  // keeps the page size it was made with, 4 KiB).
  // Checkpointing every 128 MiB rather than SQLite's default 4 MiB keeps fsyncs off the critical
  // path (and WalCheckpointer moves bulk ingests' checkpoints off the writer's thread altogether).
  {
    Statement q(db_, "PRAGMA page_size");
    if (q.step()) page_size_ = q.int64(0);
  }
  exec("PRAGMA wal_autocheckpoint=" + std::to_string(wal_frames(kWalAutoCheckpointBytes)));
  exec("PRAGMA journal_size_limit=67108864");
  exec("PRAGMA foreign_keys=OFF");
  // A write transaction touches one leaf of value per tensor (the table is clustered by tensor):
  // those pages must stay in the cache, or SQLite spills them to the WAL mid-transaction and
  // rewrites (and re-checksums) every later frame at commit. The cache grows only as needed.
  set_page_cache_kib(db_, kPageCacheKiB);
  exec("BEGIN IMMEDIATE");
  try {
    exec(schema_sql());
    const bool versioned = [&] {
      Statement v(db_, "SELECT count(*) FROM schema_version");  // finalized before the DDL below
      return v.step() && v.int64(0) > 0;
    }();
    if (!versioned) {
      exec("INSERT INTO schema_version(version) VALUES (" + std::to_string(kSchemaVersion) + ")");
      install_planner_stats();
    } else if (found_version_ < kSchemaVersion) {
      upgrade(*this, found_version_);  // migrations.h
    }
    // Also on databases older than it; written only when it differs, as a write of page 1 changes
    // the file's bytes even when nothing else changed.
    const bool marked = [&] {
      Statement id(db_, "PRAGMA application_id");
      return id.step() && id.int64(0) == kApplicationId;
    }();
    if (!marked) exec("PRAGMA application_id=" + std::to_string(kApplicationId));
    exec("COMMIT");
    exec("ANALYZE sqlite_schema");  // (re)load the statistics into this connection
  } catch (...) {
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    throw;
  }
}

// Statistics shaped like a large trial (schema.sql explains why). Each row: index, then the
// table's row count and the average rows per distinct prefix of the index's columns.
void Database::install_planner_stats() {
  exec("ANALYZE sqlite_schema");  // creates sqlite_stat1 if needed
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
      {"value", "value", "10000000 1000 1 1 1"},  // WITHOUT ROWID: the key is named after the table
      {"value", "value_by_step", "10000000 1000000 100"},
      {"value_blob", nullptr, "10000000"},
      {"value_distribution", nullptr, "10000000"},
      {"value_histogram", nullptr, "10000000"},
      {"bucket_octave", nullptr, "2047"},
      {"bucket_octave", "bucket_octave_by_first", "2047 1"},
      {"ingested_file", "ingested_file", "1000000 100000 1"},
      {"ingest_error", nullptr, "100"},
      {"ingest_error", "ingest_error_key", "100 10 2 1"},
  };
  Statement ins(db_, "INSERT INTO sqlite_stat1(tbl, idx, stat) VALUES (?, ?, ?)");
  for (const auto& row : kStats) {
    ins.bind(1, std::string_view(row[0]));
    if (row[1]) ins.bind(2, std::string_view(row[1]));
    else ins.bind_null(2);
    ins.bind(3, std::string_view(row[2])).run();
  }
}

Database::~Database() {
  set_time_limit(0, "");
  sqlite3_close_v2(db_);
}

void Database::set_time_limit(double seconds, const std::string& what) {
  if (!db_) return;
  std::lock_guard<std::mutex> lock(g_time_limits_mutex);
  if (!(seconds > 0)) {
    if (g_time_limits.erase(db_)) sqlite3_progress_handler(db_, 0, nullptr, nullptr);
    return;
  }
  TimeLimitState& state = g_time_limits[db_];
  // Past a century is no limit; it also keeps the addition below from overflowing.
  const double capped = std::min(seconds, 100.0 * 365 * 24 * 3600);
  state.deadline = std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                          std::chrono::duration<double>(capped));
  state.what = what;
  sqlite3_progress_handler(db_, kProgressInstructions, past_deadline, &state);
}

bool Database::time_limit_reached() const {
  std::lock_guard<std::mutex> lock(g_time_limits_mutex);
  const auto it = g_time_limits.find(db_);
  return it != g_time_limits.end() && std::chrono::steady_clock::now() >= it->second.deadline;
}

void Database::exec(std::string_view sql) {
  const ConnectionMutex held(db_);
  std::string s(sql);
  char* err = nullptr;
  if (sqlite3_exec(db_, s.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = err ? err : sqlite3_errmsg(db_);
    if (std::string limit = time_limit_message(db_); !limit.empty()) msg = std::move(limit);
    int code = sqlite3_extended_errcode(db_);
    sqlite3_free(err);
    if (is_corruption(code)) throw corruption_error(path_, msg, code);
    throw Error(Status::database(msg + " (SQL: " + abbreviate_sql(sql) + ")").at(path_), code);
  }
}

Statement::Statement(sqlite3* db, std::string_view sql) : db_(db) {
  const ConnectionMutex held(db);
  if (sqlite3_prepare_v3(db, sql.data(), static_cast<int>(sql.size()), SQLITE_PREPARE_PERSISTENT, &stmt_, nullptr) !=
      SQLITE_OK)
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
  const ConnectionMutex held(db_);
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  Error e = error("");  // before the reset, which may change the connection's message
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
