// trialdb sql: run SQL on a database with the tensor functions (tensor_reduce, regexp, ...) loaded.
#include <iostream>

#include "schema/database.h"
#include "sqlext/register.h"
#include "src/commands.h"
#include "src/output.h"

namespace trialdb::cli {

namespace {
struct SqlArgs {
  std::string db, query;
  bool csv = false, json = false;
};
}  // namespace

void add_sql(CLI::App& app) {
  auto a = std::make_shared<SqlArgs>();
  CLI::App* cmd = app.add_subcommand("sql", "Run SQL with the trialdb functions available");
  cmd->footer(
      "Example:\n"
      "  trialdb sql --db trials.db \"SELECT tensor, step, value FROM reductions\n"
      "     WHERE trial = 'pt_bad_init' AND reduction = 'mean' AND abs = 1 AND tensor REGEXP '^gradient'\"");
  cmd->add_option("--db", a->db, "Database file")->required()->check(CLI::ExistingFile);
  cmd->add_option("query", a->query, "SQL (several statements allowed; the last one's rows are printed)")->required();
  cmd->add_flag("--csv", a->csv, "CSV output");
  cmd->add_flag("--json", a->json, "JSON output");
  cmd->callback([a] {
    Database db(a->db, OpenMode::kExisting);
    trialdb_register_sql_functions(db.handle());   // the rule_* helpers too: rule views can be queried
    print_query(db.handle(), a->query, a->json ? Format::kJson : a->csv ? Format::kCsv : Format::kTable, std::cout);
  });
}

}  // namespace trialdb::cli
