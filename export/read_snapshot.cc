// One state of the database read through several connections (read_snapshot.h).
#include "export/read_snapshot.h"

#include <sys/stat.h>

#include <optional>
#include <utility>

namespace trialdb::exporter {

namespace {

// Tries at joining the readers to the export's state: each fails only when a commit lands in
// the instant of beginning their transactions (the first try also opens them).
constexpr int kJoinTries = 5;

// The connection's data_version, read in a read transaction of the statement's own, or, inside
// BEGIN, at the start of the transaction it begins and holds.
int64_t data_version(Database& db) {
  Statement q(db.handle(), "PRAGMA data_version");
  return q.step() ? q.int64(0) : -1;
}

// Begins a read transaction and really starts it (a deferred BEGIN starts at the first read):
// the data_version at its start.
int64_t begin_read(Database& db) {
  db.exec("BEGIN");
  return data_version(db);
}

void end_read(Database& db) noexcept {
  // A read transaction has nothing to lose; ROLLBACK without one is an error, not a change.
  if (!sqlite3_get_autocommit(db.handle())) sqlite3_exec(db.handle(), "ROLLBACK", nullptr, nullptr, nullptr);
}

// The file a path names now.
struct FileIdentity {
  dev_t device;
  ino_t inode;
  bool operator==(const FileIdentity&) const = default;
};

// Nothing when `path` cannot be examined.
std::optional<FileIdentity> identity_of(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  return FileIdentity{st.st_dev, st.st_ino};
}

}  // namespace

OpenReader same_file_reader(const std::string& path,
                            std::function<std::unique_ptr<Database>(const std::string&)> open) {
  return [path, open = std::move(open), first = identity_of(path)] {
    std::unique_ptr<Database> reader = open(path);
    // Examined after the open: a rename before it shows here, one after it leaves this reader
    // on the first file and only costs the readers.
    const std::optional<FileIdentity> now = identity_of(path);
    if (!first || now != first) throw Error(ErrorKind::kIo, path + " is not the file it was when the export began");
    return reader;
  };
}

ReadSnapshot::ReadSnapshot(Database& db, size_t readers, const OpenReader& open_reader) : db_(db) {
  if (readers > 0 && open_reader) {
    try {
      if (join(readers, open_reader)) return;
    } catch (const Error&) {  // a reader could not be opened: `db` reads alone
    }
    end_all();
    readers_.clear();
  }
  db_.exec("BEGIN");
}

ReadSnapshot::~ReadSnapshot() { end_all(); }

bool ReadSnapshot::join(size_t readers, const OpenReader& open_reader) {
  for (int tries = 0; tries < kJoinTries; ++tries) {
    const int64_t before = data_version(db_);
    for (size_t i = 0; i < readers; ++i) {
      if (readers_.size() == i) readers_.push_back(open_reader());
      begin_read(*readers_[i]);
    }
    if (begin_read(db_) == before) return true;
    end_all();
  }
  return false;
}

void ReadSnapshot::end_all() noexcept {
  end_read(db_);
  for (const std::unique_ptr<Database>& r : readers_) end_read(*r);
}

}  // namespace trialdb::exporter
