// trialdb rm and trialdb rename: a trial removed from a database, or given another name, in one
// transaction; other trials untouched. Which rows are a trial's is the schema's to know
// (schema/trial_edit.h); a trial that `ingest --follow` is following is refused, naming it.
#include <iostream>
#include <string>

#include "schema/database.h"
#include "schema/trial_edit.h"
#include "src/commands.h"
#include "src/open_db.h"
#include "src/output.h"

namespace trialdb::cli {

namespace {

struct TrialArgs {
  std::string db, trial, to;
};

void remove_command(const TrialArgs& a) {
  auto db = open_db(a.db, OpenMode::kExisting);
  Transaction tx(*db);
  require_trials(*db, {a.trial});
  remove_trial(*db, a.trial);
  tx.commit();
  std::cerr << "trialdb rm: removed trial " << printable(a.trial) << " from " << printable(a.db) << "\n";
}

void rename_command(const TrialArgs& a) {
  if (a.to.empty()) throw Error(ErrorKind::kUsage, "--to: the new name is empty");
  auto db = open_db(a.db, OpenMode::kExisting);
  Transaction tx(*db);
  require_trials(*db, {a.trial});
  rename_trial(*db, a.trial, a.to);
  tx.commit();
  std::cerr << "trialdb rename: " << printable(a.trial) << " is now " << printable(a.to) << "\n";
}

}  // namespace

void add_trial_commands(CLI::App& app) {
  auto rm = std::make_shared<TrialArgs>();
  CLI::App* r =
      app.add_subcommand("rm", "Remove a trial and everything of it (values, statistics, findings) from a database");
  r->footer("Example:\n  trialdb rm --db trials.db --trial old_run");
  r->add_option("--db", rm->db, "Database file")->required();
  r->add_option("--trial", rm->trial, "The trial to remove")->required();
  r->callback([rm] { remove_command(*rm); });

  auto rn = std::make_shared<TrialArgs>();
  CLI::App* n = app.add_subcommand("rename", "Give a trial another name (its findings and rule state follow)");
  n->footer("Example:\n  trialdb rename --db trials.db --trial run1 --to baseline");
  n->add_option("--db", rn->db, "Database file")->required();
  n->add_option("--trial", rn->trial, "The trial's name")->required();
  n->add_option("--to", rn->to, "Its new name")->required();
  n->callback([rn] { rename_command(*rn); });
}

}  // namespace trialdb::cli
