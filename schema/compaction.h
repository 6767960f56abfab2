// Giving a database's free space back to the file system: `trialdb compact`.
//
// Removing a trial (trial_edit.h) frees its pages inside the file: SQLite keeps them on its
// freelist and the next ingest reuses them, but the file does not shrink. compact() rebuilds the
// file without them (VACUUM), then checkpoints the WAL into it and truncates the WAL, so the
// space is given back. A file made before trialdb set auto_vacuum (database.cc) gets it in the
// rebuild, and with it the `rm` that reads no blob; and the file takes the page size the values
// it holds call for (page_size_policy.h: 2 KiB unless they are large) when no other connection
// has it open.
#pragma once
#include <cstdint>
#include <functional>

namespace trialdb {

class Database;

struct CompactionResult {
  uint64_t bytes_before = 0, bytes_after = 0;  // the database file and its WAL
  uint64_t page_size_before = 0, page_size_after = 0;
};

// progress(done, total): pages of the database copied so far, of the pages in use; called from
// SQLite's progress handler while VACUUM copies them (a rough count: the copy's page reads).
// Throws Error (kDatabase) as Database does; kBusy-like waits follow the busy timeout.
CompactionResult compact(Database& db, const std::function<void(uint64_t done, uint64_t total)>& progress);

}  // namespace trialdb
