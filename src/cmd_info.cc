// trialdb info: what a database holds: trials (steps per mode, tensors, workers, collections,
// errors), their collections, and with --tensors every tensor (smdebug's tensor_names() with
// detail). Every count is of the public view whose rows it counts (--tensors: of tensor_values'
// rows, read from the tensors' summary, src/tensor_listing.h).
#include <iostream>

#include <nlohmann/json.hpp>

#include "schema/database.h"
#include "src/commands.h"
#include "src/open_db.h"
#include "src/output.h"
#include "src/tensor_listing.h"

namespace trialdb::cli {

namespace {

struct InfoArgs {
  std::string db, trial;
  bool csv = false, json = false, full = false, tensors = false;
};

std::string quoted(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("''") : std::string(1, c);
  return q + "'";
}

// "WHERE <column> = '<trial>'" for --trial, else "".
std::string trial_filter(const InfoArgs& a, const char* column) {
  return a.trial.empty() ? "" : std::string(" WHERE ") + column + " = " + quoted(a.trial);
}

std::string trials_sql(const InfoArgs& a) {
  return "SELECT t.trial, t.path, t.workers,\n"
         "       (SELECT count(*) FROM steps s WHERE s.trial = t.trial AND s.complete) AS steps,\n"
         "       (SELECT group_concat(mode || ':' || n, ' ') FROM (SELECT mode, count(*) AS n FROM steps s\n"
         "         WHERE s.trial = t.trial AND s.complete GROUP BY mode ORDER BY mode)) AS steps_per_mode,\n"
         "       (SELECT count(*) FROM tensors x WHERE x.trial = t.trial) AS tensors,\n"
         "       (SELECT count(*) FROM collection_definitions c WHERE c.trial = t.trial) AS collections,\n"
         "       (SELECT count(*) FROM ingest_errors e WHERE e.trial = t.trial) AS errors, t.ended\n"
         "FROM trials t" +
         trial_filter(a, "t.trial") + " ORDER BY t.trial";
}

std::string collections_sql(const InfoArgs& a) {
  return "SELECT c.trial, c.collection, count(m.tensor) AS tensors, group_concat(m.tensor, ', ') AS members\n"
         "FROM collection_definitions c LEFT JOIN collections m ON m.trial = c.trial AND m.collection = c.collection" +
         trial_filter(a, "c.trial") + "\nGROUP BY c.trial, c.collection ORDER BY c.trial, c.collection";
}

// --json: one document, each trial an object with its steps per mode and its collections.
void print_json(Database& db, const InfoArgs& a) {
  nlohmann::ordered_json trials = nlohmann::ordered_json::array();
  Statement q(db.handle(), trials_sql(a));
  while (q.step()) {
    nlohmann::ordered_json t;
    t["trial"] = q.text(0);
    t["path"] = q.text(1);
    t["workers"] = q.int64(2);
    t["steps"] = q.int64(3);
    t["steps_per_mode"] = nlohmann::ordered_json::object();
    t["tensors"] = q.int64(5);
    t["errors"] = q.int64(7);
    t["ended"] = q.int64(8) != 0;
    t["collections"] = nlohmann::ordered_json::object();
    trials.push_back(std::move(t));
  }
  for (auto& t : trials) {
    const std::string name = t["trial"];
    Statement modes(db.handle(),
                    "SELECT mode, count(*) FROM steps WHERE trial = ?1 AND complete GROUP BY mode ORDER BY mode");
    modes.bind(1, name);
    while (modes.step()) t["steps_per_mode"][modes.text(0)] = modes.int64(1);
    Statement colls(
        db.handle(),
        "SELECT c.collection, m.tensor FROM collection_definitions c LEFT JOIN collections m "
        "ON m.trial = c.trial AND m.collection = c.collection WHERE c.trial = ?1 ORDER BY c.collection, m.tensor");
    colls.bind(1, name);
    while (colls.step()) {
      auto& members = t["collections"][colls.text(0)];
      if (members.is_null()) members = nlohmann::ordered_json::array();
      if (!colls.is_null(1)) members.push_back(colls.text(1));
    }
  }
  std::cout << json_text(trials) << "\n";
}

void run(const InfoArgs& a) {
  std::unique_ptr<Database> opened = open_db(a.db, OpenMode::kReadOnly);
  Database& db = *opened;
  if (!a.trial.empty()) require_trials(db, {a.trial});
  if (a.full) set_full_width();
  const Format f = a.json ? Format::kJson : a.csv ? Format::kCsv : Format::kTable;
  reporting_corruption(db, [&] {
    if (a.tensors) return print_table(tensor_listing(db.handle(), a.trial), f, std::cout);
    if (a.json) return print_json(db, a);
    print_query(db.handle(), trials_sql(a), f, std::cout);
    std::cout << "\n";
    print_query(db.handle(), collections_sql(a), f, std::cout);
  });
}

}  // namespace

void add_info(CLI::App& app) {
  auto a = std::make_shared<InfoArgs>();
  CLI::App* cmd =
      app.add_subcommand("info", "Show the trials in a database: steps per mode, tensors, workers, collections");
  cmd->footer(
      "Examples:\n  trialdb info --db trials.db --trial pt_bad_init\n  trialdb info --db trials.db --tensors --full");
  cmd->add_option("--db", a->db, "Database file")->required();
  cmd->add_option("--trial", a->trial, "Only this trial");
  cmd->add_flag("--tensors", a->tensors,
                "List every tensor: dtype, shape, steps saved, workers (smdebug's tensor_names())");
  cmd->add_flag("--full", a->full, "Show every name whole, however wide the table gets");
  auto* csv = cmd->add_flag("--csv", a->csv, "CSV output (trials, then collections)");
  cmd->add_flag("--json", a->json, "JSON output: each trial with its steps per mode and collections")->excludes(csv);
  cmd->callback([a] { run(*a); });
}

}  // namespace trialdb::cli
