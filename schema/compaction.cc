#include "schema/compaction.h"

#include <filesystem>
#include <string>
#include <system_error>

#include "schema/database.h"
#include "schema/page_size_policy.h"
#include "schema/rollback_journal.h"

namespace trialdb {

namespace {

// VM instructions between two calls of the progress handler.
constexpr int kProgressEveryOps = 1000;

uint64_t file_size_or_zero(const std::string& path) {
  std::error_code ec;
  const uintmax_t size = std::filesystem::file_size(path, ec);
  return ec ? 0 : static_cast<uint64_t>(size);
}

uint64_t bytes_on_disk(const Database& db) {
  return file_size_or_zero(db.path()) + file_size_or_zero(db.path() + "-wal");
}

int64_t pragma_int(Database& db, const char* pragma) {
  Statement q(db.handle(), std::string("PRAGMA ") + pragma);
  return q.step() ? q.int64(0) : 0;
}

struct Watch {
  sqlite3* db;
  int base_misses;
  uint64_t total;
  const std::function<void(uint64_t, uint64_t)>* progress;
};

// The pages VACUUM has read so far are the connection's page cache misses since it began: it
// reads every page in use once (the cache is far smaller than a database worth compacting).
int on_progress(void* arg) {
  auto* w = static_cast<Watch*>(arg);
  int misses = 0, highwater = 0;
  sqlite3_db_status(w->db, SQLITE_DBSTATUS_CACHE_MISS, &misses, &highwater, 0);
  const uint64_t done = misses > w->base_misses ? static_cast<uint64_t>(misses - w->base_misses) : 0;
  (*w->progress)(done < w->total ? done : w->total, w->total);
  return 0;
}

// What the file holds, as page_size_policy.h wants it: the stored blobs' sizes in the order VACUUM
// copies them, and the most tensors one trial has (at most the values one of its steps saves).
PageSizeSample stored_value_sizes(Database& db) {
  PageSizeSample sample;
  Statement blobs(db.handle(), "SELECT length(data) FROM value_blob ORDER BY value_id");
  while (blobs.step()) sample.blob_bytes.push_back(static_cast<uint64_t>(blobs.int64(0)));
  Statement tensors(db.handle(),
                    "SELECT coalesce(max(n), 0) FROM (SELECT count(*) AS n FROM tensor GROUP BY trial_id)");
  if (tensors.step()) sample.max_values_per_step = static_cast<uint64_t>(tensors.int64(0));
  return sample;
}

// VACUUM, with progress(done, total) over the pages in use.
void vacuum(Database& db, const std::function<void(uint64_t done, uint64_t total)>& progress) {
  const int64_t in_use = pragma_int(db, "page_count") - pragma_int(db, "freelist_count");
  int misses = 0, highwater = 0;
  sqlite3_db_status(db.handle(), SQLITE_DBSTATUS_CACHE_MISS, &misses, &highwater, 0);
  Watch watch{db.handle(), misses, static_cast<uint64_t>(in_use > 0 ? in_use : 0), &progress};
  sqlite3_progress_handler(db.handle(), kProgressEveryOps, on_progress, &watch);
  try {
    db.exec("VACUUM");
  } catch (...) {
    sqlite3_progress_handler(db.handle(), 0, nullptr, nullptr);
    throw;
  }
  sqlite3_progress_handler(db.handle(), 0, nullptr, nullptr);
  progress(watch.total, watch.total);
}

}  // namespace

CompactionResult compact(Database& db, const std::function<void(uint64_t done, uint64_t total)>& progress) {
  CompactionResult r;
  db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  r.bytes_before = bytes_on_disk(db);
  r.page_size_before = static_cast<uint64_t>(pragma_int(db, "page_size"));
  // A file made before auto_vacuum was set (database.cc) takes it with the rebuild, and the file
  // takes the page size its values call for (page_size_policy.h) when nobody else has it open:
  // VACUUM changes the page size only outside WAL mode (rollback_journal.h).
  db.exec("PRAGMA auto_vacuum=INCREMENTAL");
  const int page_size = choose_page_size(stored_value_sizes(db), page_size_limits());
  const bool wants_resize = static_cast<int64_t>(r.page_size_before) != page_size;
  // A rebuild through the rollback journal first copies every page it will overwrite or cut off
  // into the journal, the free ones included (a 1.1 GB file emptied by `rm`: 1.1 GB journaled, 3.5
  // s), where one in WAL mode writes only the pages in use. A file more free than used is
  // therefore rebuilt in WAL mode first, and then again at its new page size.
  const int64_t free_pages = pragma_int(db, "freelist_count");
  bool rebuilt = false;
  if (wants_resize && free_pages > pragma_int(db, "page_count") - free_pages) {
    vacuum(db, progress);
    db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
    rebuilt = true;
  }
  if (wants_resize && leave_wal(db)) {
    db.exec("PRAGMA page_size=" + std::to_string(page_size));
    try {
      vacuum(db, progress);
    } catch (...) {
      return_to_wal(db.handle());
      throw;
    }
    return_to_wal(db.handle());  // the rebuild wrote the file itself, and left no WAL to fold in
  } else {
    if (!rebuilt) vacuum(db, progress);
    db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  }
  r.bytes_after = bytes_on_disk(db);
  r.page_size_after = static_cast<uint64_t>(pragma_int(db, "page_size"));
  return r;
}

}  // namespace trialdb
