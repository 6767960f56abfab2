// A VFS shim over SQLite's default VFS that, while turned on for a database file, holds back
// SQLite's consecutive page writes and writes them, on the caller's thread, as one call of up to
// 64 KiB.
//
// Why: SQLite writes one page per write call, and a 4 KiB pwrite costs the kernel much more per
// byte than a 64 KiB one, while during a bulk load the writer thread bounds the ingest
// (bench/README.md, "Large-tensor ingest").
//
// Held-back bytes are written before anything that could observe the file: a read of a range
// they overlap, any sync, size, truncate, lock change, file control (the size hint is ignored),
// shared-memory call or close, and when combining is turned off. Until then they are as if
// SQLite had not yet written them, which it may assume of any write before a sync; so a crash
// loses nothing a sync had promised. A failed write is reported by the next write or by that
// call. Only main database files combine, and only while BulkLoad turns it on (rollback
// journal, synchronous=FULL).
#pragma once
#include <sqlite3.h>

namespace trialdb {

// Registers the shim once per process (not as the default) and returns its name, to pass to
// sqlite3_open_v2.
const char* write_combining_vfs_name();

// Turns combining on or off for db's main file; off writes what is held back. Returns false if
// the file was not opened through the shim, or that write failed.
bool set_write_combining(sqlite3* db, bool on);

}  // namespace trialdb
