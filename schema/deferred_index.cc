// An index built at the end of a bulk insert into its empty table (deferred_index.h).
#include "schema/deferred_index.h"

#include <utility>

namespace trialdb {

DeferredIndex::DeferredIndex(Database& db, std::string table, std::string index)
    : db_(db), table_(std::move(table)), index_(std::move(index)) {}

void DeferredIndex::defer_if_empty() {
  if (asked_) return;
  asked_ = true;
  // Each statement is finalized before the DROP, which SQLite refuses while one is running.
  {
    Statement any(db_.handle(), "SELECT 1 FROM " + table_ + " LIMIT 1");
    if (any.step()) return;
  }
  {
    Statement sql(db_.handle(), "SELECT sql FROM sqlite_schema WHERE type = 'index' AND name = ?1 AND tbl_name = ?2");
    sql.bind(1, index_).bind(2, table_);
    if (!sql.step() || sql.is_null(0)) return;  // no such index (or SQLite's own, which cannot be dropped)
    create_sql_ = sql.text(0);
  }
  bool stats = false;
  {
    Statement q(db_.handle(), "SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'sqlite_stat1'");
    stats = q.step();
  }
  has_stat_ = false;
  if (stats) {
    Statement stat(db_.handle(), "SELECT stat FROM sqlite_stat1 WHERE tbl = ?1 AND idx = ?2");
    stat.bind(1, table_).bind(2, index_);
    has_stat_ = stat.step();
    stat_ = has_stat_ ? stat.text(0) : std::string();
  }
  db_.exec("DROP INDEX " + index_);
  deferred_ = true;
}

void DeferredIndex::build() {
  asked_ = false;
  if (!deferred_) return;
  db_.exec(create_sql_);
  if (has_stat_)
    Statement(db_.handle(), "INSERT INTO sqlite_stat1(tbl, idx, stat) VALUES (?1, ?2, ?3)")
        .bind(1, table_)
        .bind(2, index_)
        .bind(3, stat_)
        .run();
  db_.exec("ANALYZE sqlite_schema");  // reload the statistics into this connection
  deferred_ = false;
}

void DeferredIndex::discard() { asked_ = deferred_ = false; }

}  // namespace trialdb
