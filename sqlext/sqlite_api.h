// How sqlext sources reach SQLite.
//
// Every sqlext source is compiled twice: into trialdb_sqlext_static with SQLITE_CORE defined (plain
// calls into the libsqlite3 the CLI links) and into the loadable module without it, where
// sqlite3ext.h turns each sqlite3_* call into a call through the host's sqlite3_api table. The
// module therefore never links or calls a second copy of SQLite, which is what makes it safe to
// load into the sqlite3 shell or Python.
#pragma once
#include <sqlite3ext.h>

#ifndef SQLITE_CORE
extern "C" {
SQLITE_EXTENSION_INIT3
}
#endif
