// rollback_journal.h: WAL mode left and taken again.
#include "schema/rollback_journal.h"

namespace trialdb {

std::string journal_mode(sqlite3* db, const char* set_to) {
  try {
    Statement q(db, std::string("PRAGMA journal_mode") + (set_to ? std::string("=") + set_to : ""));
    return q.step() ? q.text(0) : "";
  } catch (const Error&) {
    return "";
  }
}

bool leave_wal(Database& db) {
  sqlite3* h = db.handle();
  const char* file = sqlite3_db_filename(h, "main");
  if (!file || !*file || !sqlite3_get_autocommit(h)) return false;
  // A busy answer means another connection is there, and is not worth waiting for.
  sqlite3_busy_timeout(h, 0);
  const bool left = journal_mode(h) == "wal" && journal_mode(h, "TRUNCATE") == "truncate";
  sqlite3_busy_timeout(h, kBusyTimeoutMs);
  if (left) db.exec("PRAGMA synchronous=FULL");
  return left;
}

void return_to_wal(sqlite3* db) noexcept {
  journal_mode(db, "WAL");
  sqlite3_exec(db, "PRAGMA synchronous=NORMAL", nullptr, nullptr, nullptr);
}

}  // namespace trialdb
