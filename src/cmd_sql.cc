// trialdb sql: run SQL on a database with the tensor functions (tensor_reduce, regexp, ...) loaded.
// Read-only unless --write: the connection is opened read-only, and an authorizer refuses what a
// read-only connection would still allow to write elsewhere or to alter the file's schema
// (ATTACH, VACUUM INTO, PRAGMA writable_schema).
#include <cstring>
#include <iostream>

#include "schema/database.h"
#include "sqlext/register.h"
#include "src/commands.h"
#include "src/open_db.h"
#include "src/output.h"

namespace trialdb::cli {

namespace {
struct SqlArgs {
  std::string db, query;
  bool csv = false, json = false, write = false;
};

// sqlite3_set_authorizer's callback for read-only queries. VACUUM INTO writes its copy through
// an ATTACH of the target, so refusing ATTACH refuses it too.
int read_only_authorizer(void*, int action, const char* arg1, const char*, const char*, const char*) {
  switch (action) {
    case SQLITE_ATTACH:
    case SQLITE_DETACH:
      return SQLITE_DENY;
    case SQLITE_PRAGMA:
      return arg1 && strcasecmp(arg1, "writable_schema") == 0 ? SQLITE_DENY : SQLITE_OK;
    default:
      return SQLITE_OK;
  }
}
}  // namespace

void add_sql(CLI::App& app) {
  auto a = std::make_shared<SqlArgs>();
  CLI::App* cmd = app.add_subcommand("sql", "Run SQL with the trialdb functions available (read-only unless --write)");
  cmd->footer(
      "Example:\n"
      "  trialdb sql --db trials.db \"SELECT tensor, step, value FROM reductions\n"
      "     WHERE trial = 'pt_bad_init' AND reduction = 'mean' AND abs = 1 AND tensor REGEXP '^gradient'\"");
  cmd->add_option("--db", a->db, "Database file")->required();
  cmd->add_option("query", a->query, "SQL (several statements allowed; the last one's rows are printed)")->required();
  cmd->add_flag("--csv", a->csv, "CSV output");
  cmd->add_flag("--json", a->json, "JSON output");
  cmd->add_flag("--write", a->write, "Allow statements that change the database (and ATTACH, VACUUM INTO)");
  cmd->callback([a] {
    std::unique_ptr<Database> db = open_db(a->db, a->write ? OpenMode::kExisting : OpenMode::kReadOnly);
    trialdb_register_sql_functions(db->handle());   // the rule_* helpers too: rule views can be queried
    if (!a->write) sqlite3_set_authorizer(db->handle(), read_only_authorizer, nullptr);
    reporting_corruption(*db, [&] {
      print_query(db->handle(), a->query, a->json ? Format::kJson : a->csv ? Format::kCsv : Format::kTable, std::cout);
    });
  });
}

}  // namespace trialdb::cli
