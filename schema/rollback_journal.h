// Leaving WAL mode for a rollback journal, and returning to it: what a bulk load
// (ingest/store/bulk_load.h) and `trialdb compact` (compaction.h, which needs it to change the
// page size) do when nobody else has the database open.
//
// Why only then: SQLite refuses to leave WAL mode while another connection holds the file, and a
// rollback journal makes readers wait for the writer's commit where the WAL would have let them
// read. So the switch is asked for without waiting, and a busy answer leaves the file in WAL mode.
// A process killed in between leaves a rollback-mode file with a hot journal: the next connection
// rolls the journal back, and the next Database returns the file to WAL.
//
//   if (leave_wal(db)) { ...write...; return_to_wal(db.handle()); }
#pragma once
#include <string>

#include "schema/database.h"

namespace trialdb {

// The connection's journal mode ("wal", "truncate", ...) after setting it to `set_to` (or, with
// nullptr, only asking); "" on any error (SQLITE_BUSY when another connection holds the file),
// which leaves it unchanged.
std::string journal_mode(sqlite3* db, const char* set_to = nullptr);

// Moves a file database in WAL mode to a TRUNCATE rollback journal (no directory change per
// commit, as DELETE would make) with synchronous=FULL (NORMAL is safe against power loss only in
// WAL mode), unless another connection has it open or a transaction is open on db. True when it
// did.
bool leave_wal(Database& db);

// Back to WAL with synchronous=NORMAL. Errors are not reported: the data are whole either way, and
// the next Database returns the file to WAL.
void return_to_wal(sqlite3* db) noexcept;

}  // namespace trialdb
