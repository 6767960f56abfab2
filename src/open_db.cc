// open_db.h: the checks every command makes on its --db before opening it.
#include "src/open_db.h"

#include <filesystem>

namespace trialdb::cli {

namespace {
// SQLite's name for a database that lives in memory only: never a trial store.
constexpr const char* kMemoryDatabase = ":memory:";
}  // namespace

std::unique_ptr<Database> open_db(const std::string& path, OpenMode mode, const char* vfs) {
  if (path.empty() || path == kMemoryDatabase)
    throw Error(ErrorKind::kUsage, "--db '" + path + "': give a database file (an in-memory or temporary database "
                                   "would be lost when the command ends)");
  std::error_code ec;
  if (mode != OpenMode::kCreate && !std::filesystem::is_regular_file(path, ec))
    throw Error(ErrorKind::kIo, "no database at " + path + " (create one with: trialdb ingest TRIAL --db " + path + ")");
  return std::make_unique<Database>(path, mode, vfs);
}

void reporting_corruption(const Database& db, const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    const int code = sqlite3_extended_errcode(db.handle());
    if (e.kind() == ErrorKind::kDatabase && !is_corruption(e.sqlite_code()) && is_corruption(code))
      throw corruption_error(db.path(), sqlite3_errmsg(db.handle()), code);
    throw;
  }
}

}  // namespace trialdb::cli
