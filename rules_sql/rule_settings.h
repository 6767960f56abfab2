// Rule parameters given as RULE.KEY=VALUE (`trialdb rules --param`): parsed, checked and stored.
//
// A value is checked when it is given, before anything is stored: the parameter must be declared
// (rule_declaration.h; the declarations are in rule_param_declared) and the value must be of its
// declared type; a trial-name parameter must name a trial of the database. A bad value stored
// would make every later evaluation of the rule fail, or evaluate it with something else.
//
// Storing reports which (trial, rule) pairs now evaluate with another value than before: their
// findings belong to the old value, and the runner evaluates those rules again from the start.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "schema/database.h"

namespace trialdb::rules {

struct RuleSetting {
  std::string rule, key, value;
  std::string text;  // as given, for messages
};

// Parses every setting and checks it; throws Error (kUsage) naming RULE.KEY and what is wrong.
std::vector<RuleSetting> check_settings(Database& db, const std::vector<std::string>& texts);

// Stores the settings in rule_param, for each of `trials` (empty: as the default of every
// trial), inside the caller's transaction. Returns the (trial, rule) pairs whose effective value
// of some parameter changed.
std::vector<std::pair<std::string, std::string>> store_settings(Database& db, const std::vector<RuleSetting>& settings,
                                                                const std::vector<std::string>& trials);

// The tensor names of one trial, read once for the notes on all its rules' selections: a trial
// may have 10,000 names, and reading, matching and scoring them again for every selection cost
// more than most rules. Each name's words (runs of ASCII letters, in lower case), which the
// closest-name suggestions compare, are split when a suggestion first needs them. Holds the
// names as they were when it was made: make one per evaluation of the trial.
class TrialTensorNames {
 public:
  TrialTensorNames(Database& db, const std::string& trial);
  const std::vector<std::string>& names() const { return names_; }
  const std::vector<std::vector<std::string>>& words() const;  // per name, in names() order

 private:
  std::vector<std::string> names_;
  mutable std::vector<std::vector<std::string>> words_;
  mutable bool split_ = false;
};

// Notes for the selections of `rule` on `trial` that match no tensor of it, e.g.
// "tensor_regex '.*relu_output' matches none of its 108 tensors; the closest names are
// 'relu0_output_0', ... (select them with --param dead_relu.tensor_regex='^relu0_output_0$,...')":
// the union of tensor_regex and collection_names, and every other regex parameter on its own.
// `names` are the trial's. A selection's patterns are matched against them until one matches; the
// names are scored for a suggestion only for a selection that matches none.
std::vector<std::string> unmatched_selections(Database& db, const std::string& trial, const std::string& rule,
                                              const TrialTensorNames& names);

}  // namespace trialdb::rules
