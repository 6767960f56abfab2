// Opening the database a command names with --db: the one place that refuses what is not a
// database file ("", ":memory:", a missing file for commands that read) before SQLite could
// create one, and that reports a corrupt file as such whichever layer met the damage.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "schema/database.h"

namespace trialdb::cli {

// Opens `path` in `mode` (schema/database.h), with every trialdb SQL function registered
// (sqlext/register.h): the histograms, histogram_buckets and rule views need them. Commands that
// read pass OpenMode::kReadOnly; one that writes only some tables names them (written_tables, a
// GLOB: see Database); a new file takes new_file_page_size (the ingest's choice).
// Throws Error: kUsage for "" and ":memory:", kIo for a missing file (unless kCreate),
// kDatabase for what Database refuses.
std::unique_ptr<Database> open_db(const std::string& path, OpenMode mode, const char* vfs = nullptr,
                                  std::string written_tables = {}, int new_file_page_size = kPageSize);

// Whether `path` names no database yet (no file, or an empty one): opening it with kCreate makes
// one.
bool is_new_database(const std::string& path);

// The database's trials, by name.
std::vector<std::string> all_trials(Database& db);

// Throws Error (kInvalidInput) naming the trials the database has when one of `names` is not
// among them: every command given --trial checks it, rather than answering with nothing.
void require_trials(Database& db, const std::vector<std::string>& names);

// Runs fn; an Error it throws on a corrupt file (SQLITE_CORRUPT, SQLITE_NOTADB: the output layer's
// errors carry no SQLite code, so the connection's last error decides) becomes
// "<file>: the database is corrupt (...)".
void reporting_corruption(const Database& db, const std::function<void()>& fn);

}  // namespace trialdb::cli
