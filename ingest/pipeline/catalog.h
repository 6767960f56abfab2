// The catalog of one trial in the database: its row, its workers and tensors (ids cached for
// the writer), its collections and which tensors belong to them. Membership is resolved when a
// tensor is first seen (a listed name, or Python re.search of an include_regex), and again for
// every tensor when a collection's definition changes. Definitions and the expected worker count
// only grow: a collections file that is now missing, unreadable or damaged takes nothing away.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ingest/source/source.h"
#include "schema/database.h"
#include "schema/py_regex.h"
#include "schema/status.h"

namespace trialdb {

class Catalog {
 public:
  // Finds the trial `name`, or creates it with `root` as its path; throws (kUsage) if the name is
  // taken by a trial from another path, also by a concurrent ingest (one transaction).
  Catalog(Database& db, std::string name, std::string root);

  int64_t trial_id() const { return trial_id_; }
  const std::string& name() const { return name_; }
  // Workers a step needs before it is complete: the collections files' count, else those seen.
  int expected_workers() const;

  // Ids, the row created on first use (inside the caller's transaction).
  int64_t worker_id(const std::string& name);
  int64_t tensor_id(const std::string& name);

  // Reads every collections file, merges them by name (union over workers), records the
  // collections and the expected worker count, and re-resolves membership when a definition
  // changed. Problems go to `report`, inside the same transaction.
  void load_collections(TrialSource& source, bool ended, const std::function<void(const Status&)>& report);

  // Collection `name`'s listed tensor names (added to *tensor_names) and include_regex patterns;
  // false when the trial defines no such collection.
  bool collection_members(const std::string& name, std::set<std::string>* tensor_names,
                          std::vector<std::string>* patterns) const;
  // The defined collections' names, comma-separated ("none" without any).
  std::string collection_names() const;

  // Membership that could not be decided (an include_regex past its match limit) since the last
  // call, one Status per collection, pattern and tensor; the tensor is left out of it.
  std::vector<Status> take_membership_errors();

 private:
  struct Collection {
    int64_t id = 0;
    std::string name;
    // Hashed: every new tensor's name is looked up in every collection's list.
    std::unordered_set<std::string> tensor_names;
    std::vector<std::unique_ptr<PyRegex>> regexes;
  };
  // A table of names (tensor or worker): its ids by name, and its statements, prepared once as a
  // trial may bring tens of thousands of new names.
  struct Names {
    Names(Database& db, const char* table, const char* id_column);
    std::unordered_map<std::string, int64_t> ids;
    Statement insert, find;
  };
  void add_memberships(int64_t tensor_id, const std::string& name);
  int64_t find_or_insert(Names& names, const std::string& name, bool* created);

  Database& db_;
  std::string name_;
  int64_t trial_id_ = 0;
  int expected_workers_ = 0;
  Names tensors_, workers_;
  Statement insert_member_;
  std::vector<Collection> collections_;
  std::vector<Status> membership_errors_;
};

}  // namespace trialdb
