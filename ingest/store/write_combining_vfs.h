// A VFS shim over SQLite's default VFS that, while turned on for a database file, collects
// SQLite's page writes into 1 MiB buffers that a thread of its own writes (WriteBehind), in
// calls of up to 64 KiB where pages are consecutive.
//
// Why: SQLite writes one page per write call, and on this kernel a 4 KiB pwrite costs about
// twice per byte what a 64 KiB one does (1 GB: 0.49-0.54 s against 0.24-0.29 s). During a bulk
// load the writer thread bounds the ingest; joined, the kernel's copy into the page cache was
// still a third of its time, which the second thread now takes off it (bench/README.md).
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
