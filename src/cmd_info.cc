// trialdb info: what a database holds: trials (steps per mode, tensors, workers, collections,
// errors), their collections, and with --tensors every tensor (smdebug's tensor_names() with
// detail). Every count is of the public view whose rows it counts (--tensors: of tensor_values'
// rows, read from the table under it).
#include <iostream>

#include <nlohmann/json.hpp>

#include "schema/database.h"
#include "src/commands.h"
#include "src/open_db.h"
#include "src/output.h"

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

// Every tensor of the tensors view (so the count in the trials table is these rows' count),
// with what its visible values say: the rows tensor_values shows, read from value's own columns
// (never a blob) in one pass over value's key, grouped by tensor. DISTINCT aggregates would cost
// a temporary table each, cleared for every tensor (most of the time on a trial of 10,000
// tensors), so the pass takes the least and greatest dtype, shape and worker instead. Equal, the
// tensor has one of each: the distinct list is that one, and its steps are its rows (value's key
// is tensor, step, worker; a global step has one tensor_step). A tensor with several falls back to
// the distinct aggregates over its own rows, read in value's key order, which is the order
// tensor_values gives them. tests/src/cli_check.py compares this with the aggregate over the view.
std::string tensors_sql(const InfoArgs& a) {
  return "WITH visible AS NOT MATERIALIZED (\n"
         "  SELECT v.tensor_id, v.tensor_step + v.step_offset AS global_step, v.worker_id, v.dtype, v.shape\n"
         "  FROM value v\n"
         "  JOIN trial t ON t.trial_id = v.trial_id AND v.tensor_step + v.step_offset <= t.complete_through\n"
         "  JOIN step s ON s.trial_id = v.trial_id AND s.step = v.tensor_step + v.step_offset" +
         trial_filter(a, "t.name") +
         "),\n"
         "seen AS (\n"
         "  SELECT tensor_id, count(*) AS n_values,\n"
         "         min(dtype) AS dtype, max(dtype) AS last_dtype,\n"
         "         min(shape) AS shape, max(shape) AS last_shape,\n"
         "         min(worker_id) AS worker, max(worker_id) AS last_worker\n"
         "  FROM visible\n"
         "  GROUP BY tensor_id)\n"
         "SELECT t.name AS trial, tn.name AS tensor,\n"
         "       CASE WHEN s.dtype IS s.last_dtype THEN (SELECT d.name FROM dtype_name d WHERE d.code = s.dtype)\n"
         "            ELSE (SELECT group_concat(DISTINCT d.name)\n"
         "                  FROM visible x LEFT JOIN dtype_name d ON d.code = x.dtype\n"
         "                  WHERE x.tensor_id = s.tensor_id) END AS dtype,\n"
         "       CASE WHEN s.shape IS s.last_shape THEN s.shape\n"
         "            ELSE (SELECT group_concat(DISTINCT x.shape)\n"
         "                  FROM visible x WHERE x.tensor_id = s.tensor_id) END AS shape,\n"
         "       CASE WHEN s.tensor_id IS NULL THEN 0\n"
         "            WHEN s.worker = s.last_worker THEN s.n_values\n"
         "            ELSE (SELECT count(DISTINCT x.global_step)\n"
         "                  FROM visible x WHERE x.tensor_id = s.tensor_id) END AS steps,\n"
         "       CASE WHEN s.tensor_id IS NULL THEN 0\n"
         "            WHEN s.worker = s.last_worker THEN (SELECT count(*) FROM worker w WHERE w.worker_id = s.worker)\n"
         "            ELSE (SELECT count(DISTINCT w.name)\n"
         "                  FROM visible x JOIN worker w ON w.worker_id = x.worker_id\n"
         "                  WHERE x.tensor_id = s.tensor_id) END AS workers\n"
         "FROM tensor tn\n"
         "JOIN trial t ON t.trial_id = tn.trial_id\n"
         "LEFT JOIN seen s ON s.tensor_id = tn.tensor_id" +
         trial_filter(a, "t.name") + "\nORDER BY t.name, tn.name";
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
    if (a.tensors) return print_query(db.handle(), tensors_sql(a), f, std::cout);
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
