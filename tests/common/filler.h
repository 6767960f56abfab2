// A transaction of `mib` 1 MiB rows in table filler (created if needed), the last bytes of each
// row `tag`: the C++ tests' way to make a database write a known amount of pages.
#pragma once
#include <cstdint>

#include "schema/database.h"

namespace trialdb::test {

inline void write_filler_mib(Database& db, int mib, int64_t tag) {
  db.exec("CREATE TABLE IF NOT EXISTS filler(k INTEGER PRIMARY KEY, v BLOB)");
  Transaction tx(db);
  Statement ins(db.handle(), "INSERT INTO filler(v) VALUES (zeroblob(?) || ?)");
  for (int i = 0; i < mib; ++i) ins.bind(1, int64_t{1} << 20).bind(2, tag).run();
  tx.commit();
}

}  // namespace trialdb::test
