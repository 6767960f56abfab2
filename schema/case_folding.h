// Folding an SQL expression's constant CASE branches. SQLite tests a CASE's conditions on every
// row even when they hold no column (CASE 2 WHEN 0 THEN ... WHEN 2 THEN ...); a statement run
// over many rows is cheaper with them decided once, beforehand.
#pragma once
#include <sqlite3.h>

#include <string>

namespace trialdb {

// `expression` with each CASE whose condition can be evaluated without a row (it prepares and
// runs as a SELECT with no FROM on `db`) replaced by the branch it takes; the conditions on a row
// stay, in order. E.g. CASE WHEN v.a = 2 THEN CASE WHEN 2 IN (4, 5) THEN v.b ELSE v.c END END
// becomes CASE WHEN v.a = 2 THEN (v.c) ELSE NULL END. Throws Error when a CASE is not whole.
std::string fold_constant_cases(sqlite3* db, const std::string& expression);

}  // namespace trialdb
