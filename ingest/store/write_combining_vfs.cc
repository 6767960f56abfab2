#include "ingest/store/write_combining_vfs.h"

#include <cstring>
#include <mutex>

namespace trialdb {

namespace {

// SQLite's unix VFS writes at most 128 KiB - 1 bytes per call (seekAndWriteFd masks the length
// with 0x1ffff), and 64 KiB already costs half per byte of 4 KiB writes.
constexpr int kBufferBytes = 64 << 10;
// A file-control opcode of our own (SQLite's are below 100): the argument is an int*, 1 or 0.
constexpr int kFcntlCombine = 0x74640001;

struct CombiningFile {
  sqlite3_file base;   // base.pMethods: kMethods
  sqlite3_file* real;  // the default VFS's file, in the same allocation after this struct
  bool main_db;
  char* buf;                 // kBufferBytes while combining is on, else nullptr
  sqlite3_int64 buf_offset;  // where the held-back bytes go
  int buf_len;               // held-back bytes: one run of consecutive writes
};

sqlite3_vfs* g_real = nullptr;
sqlite3_vfs g_shim;

CombiningFile* cf(sqlite3_file* f) { return reinterpret_cast<CombiningFile*>(f); }
const sqlite3_io_methods* real_methods(CombiningFile* f) { return f->real->pMethods; }

// Writes what is held back, on the caller's thread.
int flush(CombiningFile* f) {
  if (f->buf_len == 0) return SQLITE_OK;
  const int n = f->buf_len;
  f->buf_len = 0;
  return real_methods(f)->xWrite(f->real, f->buf, n, f->buf_offset);
}

int x_close(sqlite3_file* file) {
  CombiningFile* f = cf(file);
  const int rc = flush(f);
  sqlite3_free(f->buf);
  f->buf = nullptr;
  const int rc_close = real_methods(f)->xClose(f->real);
  return rc != SQLITE_OK ? rc : rc_close;
}

// A read writes the held-back bytes first only when it overlaps them: SQLite reads pages back
// during a load (B-tree pages that left its cache), rarely ones not yet written.
int x_read(sqlite3_file* file, void* p, int amt, sqlite3_int64 off) {
  CombiningFile* f = cf(file);
  if (f->buf_len > 0 && off < f->buf_offset + f->buf_len && f->buf_offset < off + amt)
    if (int rc = flush(f)) return rc;
  return real_methods(f)->xRead(f->real, p, amt, off);
}

// A write that continues the held-back run and fits joins it; any other write sends the run
// first, then starts a new one (or, at a buffer's size or more, is written as it is).
int x_write(sqlite3_file* file, const void* p, int amt, sqlite3_int64 off) {
  CombiningFile* f = cf(file);
  if (!f->buf) return real_methods(f)->xWrite(f->real, p, amt, off);
  if (f->buf_len > 0 && off == f->buf_offset + f->buf_len && f->buf_len + amt <= kBufferBytes) {
    std::memcpy(f->buf + f->buf_len, p, static_cast<size_t>(amt));
    f->buf_len += amt;
    return SQLITE_OK;
  }
  if (int rc = flush(f)) return rc;
  if (amt >= kBufferBytes) return real_methods(f)->xWrite(f->real, p, amt, off);
  std::memcpy(f->buf, p, static_cast<size_t>(amt));
  f->buf_offset = off;
  f->buf_len = amt;
  return SQLITE_OK;
}

// Every other method writes what is held back, then defers to the real file.
#define FLUSH_THEN(call)            \
  CombiningFile* f = cf(file);      \
  if (int rc = flush(f)) return rc; \
  return real_methods(f)->call

int x_truncate(sqlite3_file* file, sqlite3_int64 size) { FLUSH_THEN(xTruncate(f->real, size)); }
int x_sync(sqlite3_file* file, int flags) { FLUSH_THEN(xSync(f->real, flags)); }
int x_file_size(sqlite3_file* file, sqlite3_int64* size) { FLUSH_THEN(xFileSize(f->real, size)); }
int x_lock(sqlite3_file* file, int level) { FLUSH_THEN(xLock(f->real, level)); }
int x_unlock(sqlite3_file* file, int level) { FLUSH_THEN(xUnlock(f->real, level)); }
int x_check_reserved_lock(sqlite3_file* file, int* out) { FLUSH_THEN(xCheckReservedLock(f->real, out)); }
int x_shm_map(sqlite3_file* file, int region, int size, int extend, void volatile** pp) {
  FLUSH_THEN(xShmMap(f->real, region, size, extend, pp));
}
int x_shm_lock(sqlite3_file* file, int offset, int n, int flags) { FLUSH_THEN(xShmLock(f->real, offset, n, flags)); }
int x_shm_unmap(sqlite3_file* file, int delete_flag) { FLUSH_THEN(xShmUnmap(f->real, delete_flag)); }
int x_fetch(sqlite3_file* file, sqlite3_int64 off, int amt, void** pp) { FLUSH_THEN(xFetch(f->real, off, amt, pp)); }
#undef FLUSH_THEN

void x_shm_barrier(sqlite3_file* file) {
  CombiningFile* f = cf(file);
  flush(f);  // no way to report a failure here; the next sync or read reports it again
  real_methods(f)->xShmBarrier(f->real);
}
int x_unfetch(sqlite3_file* file, sqlite3_int64 off, void* p) {
  CombiningFile* f = cf(file);
  return real_methods(f)->xUnfetch(f->real, off, p);
}
int x_sector_size(sqlite3_file* file) { return real_methods(cf(file))->xSectorSize(cf(file)->real); }
int x_device_characteristics(sqlite3_file* file) {
  return real_methods(cf(file))->xDeviceCharacteristics(cf(file)->real);
}

int x_file_control(sqlite3_file* file, int op, void* arg) {
  CombiningFile* f = cf(file);
  // SQLite gives a size hint before each cache spill. The unix VFS acts on it only with a chunk
  // size or a memory map, which trialdb sets neither of, and a hint may be ignored: while
  // combining is on it is, rather than writing the held-back bytes for it.
  if (op == SQLITE_FCNTL_SIZE_HINT && f->buf) return SQLITE_OK;
  if (int rc = flush(f)) return rc;
  if (op != kFcntlCombine) return real_methods(f)->xFileControl(f->real, op, arg);
  const bool on = *static_cast<int*>(arg) != 0;
  if (on && !f->main_db) return SQLITE_NOTFOUND;
  if (on && !f->buf) {
    f->buf = static_cast<char*>(sqlite3_malloc(kBufferBytes));
    if (!f->buf) return SQLITE_NOMEM;  // the writes stay one by one
  } else if (!on) {
    sqlite3_free(f->buf);  // flushed above
    f->buf = nullptr;
  }
  return SQLITE_OK;
}

const sqlite3_io_methods kMethods = {
    3,
    x_close,
    x_read,
    x_write,
    x_truncate,
    x_sync,
    x_file_size,
    x_lock,
    x_unlock,
    x_check_reserved_lock,
    x_file_control,
    x_sector_size,
    x_device_characteristics,
    x_shm_map,
    x_shm_lock,
    x_shm_barrier,
    x_shm_unmap,
    x_fetch,
    x_unfetch,
};

int x_open(sqlite3_vfs*, sqlite3_filename name, sqlite3_file* file, int flags, int* out_flags) {
  CombiningFile* f = cf(file);
  std::memset(f, 0, sizeof *f);
  f->real = reinterpret_cast<sqlite3_file*>(f + 1);
  const int rc = g_real->xOpen(g_real, name, f->real, flags, out_flags);
  if (rc != SQLITE_OK || !f->real->pMethods) {
    // A file SQLite will not close: close what the real VFS opened, if anything.
    if (f->real->pMethods) f->real->pMethods->xClose(f->real);
    return rc != SQLITE_OK ? rc : SQLITE_CANTOPEN;
  }
  f->main_db = (flags & SQLITE_OPEN_MAIN_DB) != 0;
  f->base.pMethods = &kMethods;
  return SQLITE_OK;
}

}  // namespace

const char* write_combining_vfs_name() {
  static std::once_flag once;
  std::call_once(once, [] {
    g_real = sqlite3_vfs_find(nullptr);
    // The real VFS's own methods, its pAppData included, serve every call but xOpen: they are
    // handed our struct, whose fields other than szOsFile, zName and xOpen are the real one's.
    g_shim = *g_real;
    g_shim.pNext = nullptr;
    g_shim.szOsFile = static_cast<int>(sizeof(CombiningFile)) + g_real->szOsFile;
    g_shim.zName = "trialdb-write-combining";
    g_shim.xOpen = x_open;
    sqlite3_vfs_register(&g_shim, 0);
  });
  return g_shim.zName;
}

bool set_write_combining(sqlite3* db, bool on) {
  int arg = on ? 1 : 0;
  return sqlite3_file_control(db, "main", kFcntlCombine, &arg) == SQLITE_OK;
}

}  // namespace trialdb
