// open_db.h: the checks every command makes on its --db before opening it.
#include "src/open_db.h"

#include <algorithm>
#include <filesystem>

#include "schema/new_file_images.h"
#include "sqlext/register.h"

namespace trialdb::cli {

namespace {
// SQLite's name for a database that lives in memory only: never a trial store.
constexpr const char* kMemoryDatabase = ":memory:";
}  // namespace

std::unique_ptr<Database> open_db(const std::string& path, OpenMode mode, const char* vfs, std::string written_tables,
                                  int new_file_page_size) {
  if (path.empty() || path == kMemoryDatabase)
    throw Error(ErrorKind::kUsage, "--db '" + path +
                                       "': give a database file (an in-memory or temporary database "
                                       "would be lost when the command ends)");
  std::error_code ec;
  if (mode != OpenMode::kCreate && !std::filesystem::is_regular_file(path, ec))
    throw Error(ErrorKind::kIo,
                "no database at " + path + " (create one with: trialdb ingest TRIAL --db " + path + ")");
  // A new file starts as a copy of this build's image of an empty database (new_file_image.h).
  if (mode == OpenMode::kCreate)
    if (const NewFileImage* image = find_new_file_image(new_file_page_size)) create_from_image(path, *image);
  auto db = std::make_unique<Database>(path, mode, vfs, std::move(written_tables), new_file_page_size);
  if (trialdb_register_sql_functions(db->handle()) != SQLITE_OK)
    throw Error(Status::database("cannot register the trialdb SQL functions").at(path));
  return db;
}

bool is_new_database(const std::string& path) {
  std::error_code ec;
  const auto bytes = std::filesystem::file_size(path, ec);
  return ec ? !std::filesystem::exists(path, ec) : bytes == 0;
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

std::vector<std::string> all_trials(Database& db) {
  std::vector<std::string> known;
  Statement q(db.handle(), "SELECT trial FROM trials ORDER BY trial");
  while (q.step()) known.push_back(q.text(0));
  return known;
}

void require_trials(Database& db, const std::vector<std::string>& names) {
  const std::vector<std::string> known = all_trials(db);
  for (const std::string& n : names)
    if (std::find(known.begin(), known.end(), n) == known.end()) {
      std::string list;
      for (const std::string& k : known) list += (list.empty() ? "" : ", ") + k;
      throw Error(ErrorKind::kInvalidInput, "no trial named '" + n + "' in " + db.path() +
                                                (list.empty() ? " (it has no trials)" : " (trials: " + list + ")"));
    }
}

}  // namespace trialdb::cli
