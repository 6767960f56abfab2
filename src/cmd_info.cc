// trialdb info: what a database holds: trials, steps per mode, tensors, workers, collections.
#include <iostream>

#include "schema/database.h"
#include "src/commands.h"
#include "src/open_db.h"
#include "src/output.h"

namespace trialdb::cli {

namespace {
struct InfoArgs {
  std::string db, trial;
  bool csv = false, json = false;
};

void run(const InfoArgs& a) {
  std::unique_ptr<Database> opened = open_db(a.db, OpenMode::kReadOnly);
  Database& db = *opened;
  if (!a.trial.empty()) require_trials(db, {a.trial});
  Format f = a.json ? Format::kJson : a.csv ? Format::kCsv : Format::kTable;
  std::string where = a.trial.empty() ? "" : " WHERE t.name = " + std::string(sqlite3_mprintf("%Q", a.trial.c_str()));
  // One row per trial: the numbers a user checks first.
  std::string sql =
      "SELECT t.name AS trial, t.path, "
      " (SELECT count(*) FROM worker w WHERE w.trial_id = t.trial_id) AS workers, "
      " (SELECT count(*) FROM step s WHERE s.trial_id = t.trial_id AND s.complete) AS steps, "
      " (SELECT group_concat(mode || ':' || n, ' ') FROM (SELECT mode, count(*) AS n FROM step s "
      "    WHERE s.trial_id = t.trial_id AND s.complete GROUP BY mode ORDER BY mode)) AS steps_per_mode, "
      " (SELECT count(*) FROM tensor x WHERE x.trial_id = t.trial_id) AS tensors, "
      " (SELECT count(*) FROM collection c WHERE c.trial_id = t.trial_id) AS collections, "
      " (SELECT count(*) FROM ingest_error e WHERE e.trial_id = t.trial_id) AS errors, "
      " t.ended "
      "FROM trial t" + where + " ORDER BY t.name";
  reporting_corruption(db, [&] { print_query(db.handle(), sql, f, std::cout); });
  if (f == Format::kTable && !a.trial.empty()) {
    std::cout << "\n";
    reporting_corruption(db, [&] {
      print_query(db.handle(),
                  "SELECT collection, count(*) AS tensors, group_concat(tensor, ', ') AS members FROM collections "
                  "WHERE trial = " + std::string(sqlite3_mprintf("%Q", a.trial.c_str())) + " GROUP BY collection ORDER BY collection",
                  f, std::cout);
    });
  }
}
}  // namespace

void add_info(CLI::App& app) {
  auto a = std::make_shared<InfoArgs>();
  CLI::App* cmd = app.add_subcommand("info", "Show the trials in a database: steps per mode, tensors, workers, collections");
  cmd->footer("Example:\n  trialdb info --db trials.db --trial pt_bad_init");
  cmd->add_option("--db", a->db, "Database file")->required();
  cmd->add_option("--trial", a->trial, "Only this trial (adds its collections)");
  cmd->add_flag("--csv", a->csv, "CSV output");
  cmd->add_flag("--json", a->json, "JSON output");
  cmd->callback([a] { run(*a); });
}

}  // namespace trialdb::cli
