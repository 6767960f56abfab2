// The export's read transaction: every row an export reads comes from one state of the database,
// so that its files agree with each other, also when several file threads read through
// connections of their own.
//
// SQLite hands a snapshot from one connection to another only when built with
// SQLITE_ENABLE_SNAPSHOT, which Debian's is not. Instead the other connections begin their read
// transactions between two readings of the export's connection's `PRAGMA data_version` (each at
// the start of a read transaction of its own; the value changes when any other connection
// commits): when both are equal nothing was committed in between, so every transaction begun in
// between sees the state the second reading's transaction, the export's, sees. Nothing is locked
// or written (a file the user may only read will do), and a writer (`ingest --follow`) is never
// waited for: a commit in between only means another try.
#pragma once
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "schema/database.h"

namespace trialdb::exporter {

// Opens another read-only connection to the export's database, with what its views need (the
// SQL functions); throws Error when it cannot.
using OpenReader = std::function<std::unique_ptr<Database>()>;

// An OpenReader of the database at `path` (each connection opened by `open`) that throws Error
// (kIo) instead once `path` names another file than it named when this was made: a file renamed
// over the path after the export's connection was opened would otherwise give readers another
// database, whose commits that connection's data_version does not count. Make it before opening
// the export's connection. A path that cannot be examined gives no readers either.
OpenReader same_file_reader(const std::string& path, std::function<std::unique_ptr<Database>(const std::string&)> open);

class ReadSnapshot {
 public:
  // Begins the read transaction of `db`. With `readers` > 0 and `open_reader`, also opens that
  // many connections and begins theirs in the same state; when one cannot be opened, or a commit
  // came in between at every try (kJoinTries), there are none and `db` alone reads.
  ReadSnapshot(Database& db, size_t readers = 0, const OpenReader& open_reader = {});
  ~ReadSnapshot();  // ends the transactions
  ReadSnapshot(const ReadSnapshot&) = delete;
  ReadSnapshot& operator=(const ReadSnapshot&) = delete;

  // The connections besides `db` that read its state: none, or as many as asked.
  const std::vector<std::unique_ptr<Database>>& readers() const { return readers_; }

 private:
  bool join(size_t readers, const OpenReader& open_reader);
  void end_all() noexcept;
  Database& db_;
  std::vector<std::unique_ptr<Database>> readers_;
};

}  // namespace trialdb::exporter
