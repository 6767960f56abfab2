// Opening a trialdb database: pragmas, the schema and its version, and small RAII helpers
// around the SQLite C API that every layer uses.
#pragma once
#include <sqlite3.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "schema/status.h"

namespace trialdb {

struct PageSizeLimits;  // schema/page_size_policy.h

// The shape of every table, the rule runner's included; older versions are upgraded by the steps
// of schema/migrations.h.
inline constexpr int kSchemaVersion = 13;  // 2: value.dtype is a code; 3: small blobs in value.data;
                                           // 4: value clustered by (tensor, step, worker);
                                           // 5: value.tensor_step, trial.complete_through;
                                           // 6: value_distribution, value_histogram, bucket_octave;
                                           // 7: value locations (event_file), partial_file;
                                           // 8: trial_follower, the rule runner's tables versioned;
                                           // 9: database_identity, trial.uid and change_seq,
                                           //    step.change_seq;
                                           // 10: value.red_computed, reductions.computed;
                                           // 11: value_histogram.buckets a histogram blob,
                                           //     histogram_blobs;
                                           // 12: tensor.visible_steps, tensor_variant;
                                           // 13: value.distribution_id, the distribution and
                                           //     histogram rows keyed by it

// PRAGMA application_id of a trialdb database (the bytes "trdb"): how a file is recognised as
// trialdb's, rather than another program's that happens to have a table of the same name.
inline constexpr int32_t kApplicationId = 0x74726462;

// How long a connection waits for another one's lock before SQLITE_BUSY.
inline constexpr int kBusyTimeoutMs = 30000;

// The page size of a new database unless its values call for larger pages (database.cc says
// why; page_size_policy.h when larger; an older file keeps its own).
inline constexpr int kPageSize = 2048;

// Each connection's page cache (PRAGMA cache_size, which takes KiB when negative).
inline constexpr int64_t kPageCacheKiB = 32768;

// Sets db's page cache to `kib` KiB (PRAGMA cache_size, negative for KiB). Not checked: a size
// only sets speed, and SQLite refuses no value of it.
void set_page_cache_kib(sqlite3* db, int64_t kib);

// The page sizes a new database may take (page_size_policy.h chooses among them).
PageSizeLimits page_size_limits();

// Bytes of frames the WAL may hold before a commit checkpoints it (wal_autocheckpoint, which
// counts frames: Database::wal_frames turns bytes into the file's pages).
inline constexpr int64_t kWalAutoCheckpointBytes = INT64_C(128) << 20;

// The DDL and public views (schema/schema.sql).
const char* schema_sql();

// Every failure here throws Error of kind kDatabase (schema/status.h), its file the database
// and sqlite_code() SQLite's extended result code (0 when the failure is not SQLite's, e.g. a
// schema version this binary does not know). A Statement's errors also quote its SQL.

// How a database is opened. Every mode refuses a file that holds something other than a trialdb
// database ("not a trialdb database": its application_id is not kApplicationId, or, for files
// written before trialdb set one, it lacks trialdb's tables) and a trialdb database of another
// schema version, before anything in the file is changed, except an older version that
// migrations.h upgrades: the writing modes upgrade it, and kReadOnly reads it as it is where that
// is read-compatible. Every mode refuses a file shorter than its header says (truncated), which
// SQLite would read as zeros; the writing modes also run PRAGMA quick_check first, so nothing is
// ever written into a damaged database (into a damaged table of those it writes, for a command
// that says which: Database's written_tables).
enum class OpenMode {
  kCreate,    // read-write; a missing or empty file gets the schema
  kExisting,  // read-write; the file must already hold a trialdb database
  kReadOnly,  // SQLITE_OPEN_READONLY and defensive: nothing is ever written (info, sql, plot, ...)
  // kReadOnly, and several threads may step the connection's statements at once (SQLite's
  // serialized mode: each call takes the connection's mutex): the export's tables, written in
  // parallel in one read transaction.
  kReadOnlyShared,
};
inline bool is_read_only(OpenMode mode) { return mode == OpenMode::kReadOnly || mode == OpenMode::kReadOnlyShared; }

// SQLite's verdict that a file is damaged or is no database (SQLITE_CORRUPT, SQLITE_NOTADB).
bool is_corruption(int sqlite_code);
// "<path>: the database is corrupt (<detail>)", kDatabase, with sqlite_code.
Error corruption_error(const std::string& path, const std::string& detail, int sqlite_code = SQLITE_CORRUPT);

// Owns a connection opened with WAL, a busy timeout and the schema applied.
class Database {
 public:
  // Opens and, in the writing modes, applies the schema after checking an existing file (PRAGMA
  // quick_check: nothing is written into a corrupt database); throws Error (kDatabase) naming the
  // file. `vfs` names a registered SQLite VFS (nullptr: the default one); the ingester passes its
  // write-combining shim. A new file takes `new_file_page_size` (a power of two, 512 to 65536;
  // page_size_policy.h chooses it for the ingest), an existing one keeps its own.
  // `written_tables`, a GLOB on table names, confines the check to what a command that writes only
  // those tables needs (e.g. "rule_*" for the rule runner): sqlite_schema and the matching tables
  // with their indexes (PRAGMA quick_check(TABLE)), not every page of the file; the pages it takes
  // from the freelist are not checked. Empty: the whole file, as is any file this open upgrades
  // (an upgrade writes elsewhere).
  explicit Database(const std::string& path, OpenMode mode = OpenMode::kCreate, const char* vfs = nullptr,
                    std::string written_tables = {}, int new_file_page_size = kPageSize);
  ~Database();
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  sqlite3* handle() const { return db_; }
  const std::string& path() const { return path_; }
  void exec(std::string_view sql);
  int64_t last_insert_rowid() const { return sqlite3_last_insert_rowid(db_); }
  // WAL frames (pages of this file, which may be older than kPageSize) that hold `bytes`.
  int wal_frames(int64_t bytes) const { return static_cast<int>(bytes / page_size_); }

  // A time limit on this connection: once `seconds` have passed from now, the statement running
  // and every later one stop with SQLITE_INTERRUPT (SQLite's progress handler), and their errors
  // say the time limit `what` (e.g. "--timeout 60") was reached. seconds <= 0 lifts the limit.
  void set_time_limit(double seconds, const std::string& what);
  bool time_limit_reached() const;

  // set_time_limit for the lifetime of the object (lifted again at its end).
  class TimeLimit {
   public:
    TimeLimit(Database& db, double seconds, const std::string& what) : db_(db) { db_.set_time_limit(seconds, what); }
    ~TimeLimit() { db_.set_time_limit(0, ""); }
    TimeLimit(const TimeLimit&) = delete;
    TimeLimit& operator=(const TimeLimit&) = delete;

   private:
    Database& db_;
  };

 private:
  void setup();  // pragmas, version check, schema; idempotent
  void setup_read_only();
  // Whether the file holds a trialdb database of this version (or one migrations.h upgrades, per
  // mode): false when it holds nothing at all (and may_be_new), else throws naming what it holds
  // instead.
  bool check_trialdb(bool may_be_new);
  void quick_check();
  void quick_check_tables(const std::string& glob);
  void check_file_size();
  void install_planner_stats();
  sqlite3* db_ = nullptr;
  std::string path_;
  OpenMode mode_;
  std::string written_tables_;
  int64_t found_version_ = 0;  // schema_version of an existing file
  int new_file_page_size_ = kPageSize;
  int64_t page_size_ = kPageSize;
};

// A prepared statement with typed bind/column helpers; reset() before re-binding. Its errors
// name the database file (sqlite3_db_filename) and the statement's SQL, cut to ~80 characters.
class Statement {
 public:
  Statement(sqlite3* db, std::string_view sql);
  ~Statement();
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  Statement& bind(int i, int64_t v);
  Statement& bind(int i, int v) { return bind(i, static_cast<int64_t>(v)); }
  Statement& bind(int i, double v);
  Statement& bind(int i, std::string_view v);            // TEXT, copied
  Statement& bind_blob(int i, const void* p, size_t n);  // copied
  // Not copied: the bytes must stay unchanged until the statement is reset. Saves a copy of
  // every tensor on the writer thread.
  Statement& bind_blob_static(int i, const void* p, size_t n);
  Statement& bind_text_static(int i, std::string_view v);  // not copied: v must outlive the step
  Statement& bind_null(int i);
  bool step();  // true while a row is available; throws Error (kDatabase) on failure
  void run() {
    step();
    reset();
  }
  void reset();

  int64_t int64(int col) const { return sqlite3_column_int64(stmt_, col); }
  double real(int col) const { return sqlite3_column_double(stmt_, col); }
  bool is_null(int col) const { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }
  std::string text(int col) const;
  // The column's bytes as a BLOB, valid until the next step.
  std::string_view blob(int col) const {
    const void* p = sqlite3_column_blob(stmt_, col);
    return {static_cast<const char*>(p), static_cast<size_t>(sqlite3_column_bytes(stmt_, col))};
  }
  sqlite3_stmt* handle() const { return stmt_; }

 private:
  Error error(const std::string& what) const;  // the connection's last error, naming the SQL
  [[noreturn]] void bind_failed(int i) const;
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
};

// BEGIN IMMEDIATE on construction, ROLLBACK unless commit() was called.
class Transaction {
 public:
  explicit Transaction(Database& db);
  ~Transaction();
  void commit();

 private:
  Database& db_;
  bool done_ = false;
};

}  // namespace trialdb
