// The catalog of one trial in the database: its row, its workers and tensors (ids cached for
// the writer), its collections and which tensors belong to them. Membership is resolved when a
// tensor is first seen (a listed name, or Python re.search of an include_regex), and again for
// every tensor when a collection's definition changes. Definitions and the expected worker count
// only grow: a collections file that is now missing, unreadable or damaged takes nothing away.
//
// A transaction's new memberships are stored at its end, in key order, several rows a statement
// (flush()); there, too, the indexes an empty table had dropped for the transaction are built
// (schema/deferred_index.h): tensor_by_name, whose entries come in no order as new tensors are
// seen, and collection_member_by_tensor.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "ingest/source/source.h"
#include "schema/database.h"
#include "schema/deferred_index.h"
#include "schema/multi_row.h"
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

  // At the end of a transaction that created tensors, before it commits: stores their
  // memberships and builds the indexes deferred. Nothing in the transaction reads
  // collection_member before.
  void flush();
  // The transaction is being rolled back: forgets what flush() would have stored.
  void discard();

  // Reads every collections file, merges them by name (union over workers), records the
  // collections and the expected worker count, and re-resolves membership when a definition
  // changed. Problems go to `report`, inside the same transaction. Files read as the last time,
  // which reported nothing, with the definitions it stored unchanged, are not parsed again.
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
  // The collections files as the last reading saw them and what it left stored, kept when it
  // reported nothing: a reading finding the same again would change nothing.
  struct CollectionsRead {
    // A text's size and hash: a file changing to another of its size and hash is all but
    // impossible, and hashing the text costs a small part of parsing it.
    static std::string digest(std::string_view text) {
      return std::to_string(text.size()) + ":" + std::to_string(std::hash<std::string_view>()(text));
    }
    std::map<std::string, std::string> file_digests;  // by path
    std::map<std::string, std::string> definitions;   // collection.definition by name
    bool operator==(const CollectionsRead&) const = default;
  };
  std::map<std::string, std::string> stored_definitions() const;
  bool collections_unchanged(TrialSource& source) const;
  bool in_transaction() const;
  void add_memberships(int64_t tensor_id, const std::string& name);
  void insert_members();
  int64_t find_or_insert(Names& names, const std::string& name, bool* created);

  Database& db_;
  std::string name_;
  int64_t trial_id_ = 0;
  int expected_workers_ = 0;
  Names tensors_, workers_;
  BatchedRows insert_members_;
  std::vector<std::pair<int64_t, int64_t>> members_;  // (collection_id, tensor_id) not stored yet
  DeferredIndex name_index_, member_index_;
  std::vector<Collection> collections_;
  std::vector<Status> membership_errors_;
  std::optional<CollectionsRead> collections_read_;
};

}  // namespace trialdb
