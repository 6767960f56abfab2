// trialdb sql: run SQL on a database with the tensor functions (tensor_reduce, regexp, ...) loaded.
// Read-only unless --write: the connection is opened read-only, and an authorizer refuses what a
// read-only connection would still allow to write elsewhere or to alter the file's schema
// (ATTACH, VACUUM INTO, PRAGMA writable_schema).
#include <cstring>
#include <iostream>

#include "schema/database.h"
#include "src/commands.h"
#include "src/open_db.h"
#include "src/output.h"
#include "src/sql_file.h"
#include "src/timeout_option.h"

namespace trialdb::cli {

namespace {
struct SqlArgs {
  std::string db, query, file;
  bool csv = false, json = false, write = false;
  int precision = 0;
  double timeout = 0;  // seconds; 0: none
};

// The SQL to run: the argument, standard input for "-", or --file (each bounded: sql_file.h).
std::string query_text(const SqlArgs& a) {
  if (!a.file.empty() && !a.query.empty())
    throw Error(ErrorKind::kUsage, "give the SQL as an argument or --file, not both");
  if (a.query.empty() && a.file.empty())
    throw Error(ErrorKind::kUsage, "give the SQL: an argument, - for standard input, or --file");
  if (a.query != "-" && a.file.empty()) return a.query;
  return a.query == "-" ? read_sql_file("-", "sql -") : read_sql_file(a.file, "--file");
}

// sqlite3_set_authorizer's callback for read-only queries. VACUUM INTO writes its copy through
// an ATTACH of the target, so refusing ATTACH refuses it too.
int read_only_authorizer(void*, int action, const char* arg1, const char*, const char*, const char*) {
  switch (action) {
    case SQLITE_ATTACH:
    case SQLITE_DETACH: return SQLITE_DENY;
    case SQLITE_PRAGMA: return arg1 && strcasecmp(arg1, "writable_schema") == 0 ? SQLITE_DENY : SQLITE_OK;
    default: return SQLITE_OK;
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
  cmd->add_option(
      "query", a->query,
      "SQL (several statements allowed; the last one's rows are printed), or - to read it from standard input");
  cmd->add_option("--file", a->file, "Read the SQL from this file");
  auto* csv = cmd->add_flag("--csv", a->csv, "CSV output, streamed (blobs as hex)");
  cmd->add_flag("--json", a->json,
                "JSON output, streamed: an array of objects, keys in SELECT order (a repeated name suffixed _2, ...), "
                "blobs as base64")
      ->excludes(csv);
  cmd->add_option("--precision", a->precision,
                  "Significant digits of real numbers (default: the shortest text that reads back as the same number)")
      ->check(CLI::Range(1, 17));
  cmd->add_flag("--write", a->write, "Allow statements that change the database (and ATTACH, VACUUM INTO)");
  add_timeout_option(cmd, &a->timeout, "Stop the SQL after this many seconds, exit 1 (default: no limit)");
  cmd->callback([a] {
    const std::string sql = query_text(*a);  // before the database is opened: a bad argument changes nothing
    std::unique_ptr<Database> db = open_db(a->db, a->write ? OpenMode::kExisting : OpenMode::kReadOnly);
    if (!a->write) sqlite3_set_authorizer(db->handle(), read_only_authorizer, nullptr);
    if (a->precision) set_real_digits(a->precision);
    const Database::TimeLimit limit(*db, a->timeout, "--timeout " + format_real(a->timeout) + " s");
    reporting_corruption(*db, [&] {
      try {
        print_query(db->handle(), sql, a->json ? Format::kJson : a->csv ? Format::kCsv : Format::kTable, std::cout);
      } catch (const Error& e) {
        if (!db->time_limit_reached()) throw;
        throw Error(
            Status::database("the SQL ran past --timeout " + format_real(a->timeout) + " s; stopped").at(a->db));
      }
    });
  });
}

}  // namespace trialdb::cli
