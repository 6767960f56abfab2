// An index built at the end of a bulk insert into its empty table instead of row by row.
//
// Why: SQLite keeps every index in step with each row inserted. When the rows come in the
// table's key order but the index's key orders them otherwise (value, clustered by tensor, and
// value_by_step, by step), every entry lands in another page of the index, and balancing those
// pages cost half of an insert of many scalars. CREATE INDEX instead sorts the entries and writes
// the index once, in order (bench/README.md, "value_by_step built at the end").
//
// Only for a table that is empty when the transaction begins: then building the index costs the
// rows of the transaction, not of the whole table. The index is dropped and built again in the
// same transaction, so no other connection ever sees the database without it; a transaction
// rolled back brings it back with everything else. Its planner statistics (sqlite_stat1, which
// DROP INDEX deletes) are put back with it, and reloaded into the connection.
#pragma once
#include <string>

#include "schema/database.h"

namespace trialdb {

class DeferredIndex {
 public:
  // `table` and `index`: plain identifiers (they are put into SQL as they are).
  DeferredIndex(Database& db, std::string table, std::string index);
  DeferredIndex(const DeferredIndex&) = delete;
  DeferredIndex& operator=(const DeferredIndex&) = delete;

  // In an open transaction, before its first insert into the table: drops the index if the
  // table has no rows. Asks once per transaction (until build() or discard()).
  void defer_if_empty();
  // The index is dropped: nothing in this transaction may read it before build().
  bool deferred() const { return deferred_; }
  // Builds the index again, with its statistics, if it was deferred: before anything in the
  // transaction reads it and before the transaction commits.
  void build();
  // The transaction is being rolled back (which restores the index itself).
  void discard();

 private:
  Database& db_;
  std::string table_, index_;
  bool asked_ = false;  // defer_if_empty has looked at the table in this transaction
  bool deferred_ = false;
  std::string create_sql_;  // the index's CREATE INDEX, as sqlite_schema holds it
  std::string stat_;        // its sqlite_stat1 row's stat, if has_stat_
  bool has_stat_ = false;
};

}  // namespace trialdb
