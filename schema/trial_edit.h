// Removing and renaming a trial: which rows are a trial's is the schema's to know, so it is
// said here, beside the DDL, once.
//
// A trial's rows are those of every table with a trial_id column, the rows hanging off them
// (blobs and distributions off values, histograms off distributions, members off collections),
// and the rows of the tables other layers add that name a trial by a column `trial` (the rule
// runner's findings, evaluated steps and each rule's state: tables named rule_*), found by that
// column rather than listed, so a rule's own state table needs no entry here.
//
// Both run in the caller's transaction and refuse, changing nothing, a trial that a live
// follower holds (follower_claim.h), with an error (kUsage) naming the follower.
#pragma once
#include <string>

namespace trialdb {

class Database;

// kUsage when there is no trial of that name.
void remove_trial(Database& db, const std::string& name);
// kUsage when `from` does not exist, `to` is empty or names an existing trial.
void rename_trial(Database& db, const std::string& from, const std::string& to);

}  // namespace trialdb
