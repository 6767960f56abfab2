// The catalog of one trial (catalog.h).
#include "ingest/pipeline/catalog.h"

#include <algorithm>
#include <map>
#include <optional>
#include <utility>

#include <nlohmann/json.hpp>

#include "ingest/format/collections_file.h"
#include "schema/multi_row.h"

namespace trialdb {

namespace {

// Memberships stored a statement (schema/multi_row.h).
constexpr size_t kMemberBatch = 64;
constexpr int kMemberParams = 2;  // collection_id, tensor_id

std::string insert_members_sql(size_t rows) {
  return "INSERT OR IGNORE INTO collection_member(collection_id, tensor_id) VALUES " +
         values_rows_sql(rows, kMemberParams);
}

}  // namespace

Catalog::Names::Names(Database& db, const char* table, const char* id_column)
    : insert(db.handle(),
             std::string("INSERT INTO ") + table + "(trial_id, name) VALUES (?, ?) ON CONFLICT DO NOTHING"),
      find(db.handle(), std::string("SELECT ") + id_column + " FROM " + table + " WHERE trial_id = ? AND name = ?") {}

Catalog::Catalog(Database& db, std::string name, std::string root)
    : db_(db),
      name_(std::move(name)),
      tensors_(db, "tensor", "tensor_id"),
      workers_(db, "worker", "worker_id"),
      insert_members_(db.handle(), kMemberBatch, insert_members_sql),
      name_index_(db, "tensor", "tensor_by_name"),
      member_index_(db, "collection_member", "collection_member_by_tensor") {
  {
    // The name's check and its claim in one transaction: of two ingests of different folders
    // under one new name, the second finds the first's path and is refused.
    Transaction tx(db_);
    Statement ins(
        db_.handle(),
        "INSERT INTO trial(name, path, uid) VALUES (?, ?, lower(hex(randomblob(16)))) ON CONFLICT(name) DO NOTHING");
    ins.bind(1, name_).bind(2, root).run();
    Statement q(db_.handle(), "SELECT trial_id, path FROM trial WHERE name = ?");
    q.bind(1, name_);
    q.step();
    if (q.text(1) != root)
      throw Error(Status::usage("trial '" + name_ + "' already exists in " + db_.path() + " from " + q.text(1) +
                                "; use --name to ingest " + root + " under another name"));
    trial_id_ = q.int64(0);
    tx.commit();
  }
  Statement t(db_.handle(), "SELECT name, tensor_id FROM tensor WHERE trial_id = ?");
  t.bind(1, trial_id_);
  while (t.step()) tensors_.ids[t.text(0)] = t.int64(1);
  Statement w(db_.handle(), "SELECT name, worker_id FROM worker WHERE trial_id = ?");
  w.bind(1, trial_id_);
  while (w.step()) workers_.ids[w.text(0)] = w.int64(1);
  Statement e(db_.handle(), "SELECT expected_workers FROM trial WHERE trial_id = ?");
  e.bind(1, trial_id_);
  e.step();
  expected_workers_ = static_cast<int>(e.int64(0));
}

int Catalog::expected_workers() const {
  return expected_workers_ > 0 ? expected_workers_ : static_cast<int>(std::max<size_t>(1, workers_.ids.size()));
}

// The id of `name` in this trial's `names`, inserting the row if needed.
int64_t Catalog::find_or_insert(Names& names, const std::string& name, bool* created) {
  *created = false;
  auto it = names.ids.find(name);
  if (it != names.ids.end()) return it->second;
  names.insert.bind(1, trial_id_).bind_text_static(2, name).run();
  *created = sqlite3_changes(db_.handle()) > 0;
  // The id column is the rowid: a row just inserted needs no lookup (one per new tensor).
  if (*created) return names.ids[name] = sqlite3_last_insert_rowid(db_.handle());
  names.find.bind(1, trial_id_).bind_text_static(2, name);
  names.find.step();
  const int64_t id = names.find.int64(0);
  names.find.reset();
  return names.ids[name] = id;
}

int64_t Catalog::worker_id(const std::string& name) {
  bool created;
  return find_or_insert(workers_, name, &created);
}

int64_t Catalog::tensor_id(const std::string& name) {
  if (auto it = tensors_.ids.find(name); it != tensors_.ids.end()) return it->second;
  // Outside a transaction each statement is one of its own: nothing waits for a flush().
  if (in_transaction()) name_index_.defer_if_empty();
  bool created;
  const int64_t id = find_or_insert(tensors_, name, &created);
  if (created) add_memberships(id, name);
  if (!in_transaction()) insert_members();
  return id;
}

void Catalog::add_memberships(int64_t id, const std::string& name) {
  for (const auto& c : collections_) {
    bool member = c.tensor_names.count(name) > 0;
    for (size_t i = 0; !member && i < c.regexes.size(); ++i) {
      try {
        member = c.regexes[i]->search(name);
      } catch (const Error& e) {  // a pattern past its match limit: reported, the tensor left out
        membership_errors_.push_back(e.status().prefixed("collection '" + c.name + "': ").at("collections/"));
      }
    }
    if (member) members_.emplace_back(c.id, id);
  }
}

void Catalog::flush() {
  insert_members();
  name_index_.build();
}

void Catalog::discard() {
  members_.clear();
  name_index_.discard();
  member_index_.discard();
}

bool Catalog::in_transaction() const { return !sqlite3_get_autocommit(db_.handle()); }

void Catalog::insert_members() {
  if (members_.empty()) return;
  if (in_transaction()) member_index_.defer_if_empty();  // else the index would be gone a while
  std::sort(members_.begin(), members_.end());           // in the table's key order
  insert_members_.write(members_.size(), [this](Statement& st, size_t k, size_t i) {
    const int first = static_cast<int>(k) * kMemberParams + 1;
    st.bind(first, members_[i].first).bind(first + 1, members_[i].second);
  });
  members_.clear();
  member_index_.build();
}

bool Catalog::collection_members(const std::string& name, std::set<std::string>* tensor_names,
                                 std::vector<std::string>* patterns) const {
  for (const auto& c : collections_) {
    if (c.name != name) continue;
    tensor_names->insert(c.tensor_names.begin(), c.tensor_names.end());
    for (const auto& re : c.regexes) patterns->push_back(re->pattern());
    return true;
  }
  return false;
}

std::string Catalog::collection_names() const {
  std::string names;
  for (const auto& c : collections_) names += (names.empty() ? "" : ", ") + c.name;
  return names.empty() ? "none" : names;
}

std::vector<Status> Catalog::take_membership_errors() { return std::exchange(membership_errors_, {}); }

// The stored definitions of this trial's collections, by name.
std::map<std::string, std::string> Catalog::stored_definitions() const {
  std::map<std::string, std::string> stored;
  Statement q(db_.handle(), "SELECT name, definition FROM collection WHERE trial_id = ?");
  q.bind(1, trial_id_);
  while (q.step()) stored.emplace(q.text(0), q.text(1));
  return stored;
}

// Whether the collections files are read as the last time, which reported nothing, and what it
// stored is still there (another ingest of the trial may have added to it).
bool Catalog::collections_unchanged(TrialSource& source) const {
  CollectionsRead now;
  for (const auto& f : source.list("collections/")) {
    if (!f.problem.is_ok()) return false;
    if (!is_collections_path(f.path)) continue;
    std::optional<ReadBuffer> text;
    if (!file_problem(read_at_most(source, f.path, kMaxCollectionsFileBytes, &text)).is_ok() || !text) return false;
    now.file_digests.emplace(f.path, CollectionsRead::digest(text->view()));
  }
  now.definitions = stored_definitions();
  return now == *collections_read_;
}

void Catalog::load_collections(TrialSource& source, bool ended, const std::function<void(const Status&)>& report) {
  if (collections_read_ && collections_unchanged(source)) return;
  collections_read_.reset();
  CollectionsRead read;
  bool reported = false;
  struct Merged {
    std::set<std::string> include_regex, tensor_names;
    // How the hook saves the collection (JSON), as the first definition that has them says:
    // workers share one configuration.
    nlohmann::json save_config, reduction_config;
  };
  // Definitions only grow: what is stored is kept, and what the files say now is added to it, so
  // a file that is missing, unreadable, damaged or half-written never drops a membership.
  std::map<std::string, Merged> merged;
  for (const auto& [name, definition] : stored_definitions()) {
    const nlohmann::json def = nlohmann::json::parse(definition, nullptr, false);
    Merged& m = merged[name];
    const auto keep = [&def](const char* key, std::set<std::string>& into) {
      if (!def.is_object() || !def.contains(key) || !def[key].is_array()) return;
      for (const auto& v : def[key])
        if (v.is_string()) into.insert(v.get<std::string>());
    };
    keep("include_regex", m.include_regex);
    keep("tensor_names", m.tensor_names);
    if (def.is_object() && def.contains("save_config")) m.save_config = def["save_config"];
    if (def.is_object() && def.contains("reduction_config")) m.reduction_config = def["reduction_config"];
  }
  std::vector<Status> issues;
  int files_seen = 0, meta_workers = 0;
  for (const auto& f : source.list("collections/")) {
    if (!f.problem.is_ok()) {
      issues.push_back(f.problem.at(f.path));
      continue;
    }
    if (!is_collections_path(f.path)) continue;
    ++files_seen;
    std::optional<ReadBuffer> text;
    if (Status st = file_problem(read_at_most(source, f.path, kMaxCollectionsFileBytes, &text)); !st.is_ok()) {
      issues.push_back(st.prefixed("cannot read the collections file: ").at(f.path));
      continue;
    }
    if (!text) {
      reported = true;  // gone since it was listed: read again next time
      continue;
    }
    read.file_digests.emplace(f.path, CollectionsRead::digest(text->view()));
    CollectionsFile cf;
    if (Status st = parse_collections_json(*text, &cf); !st.is_ok()) {
      if (ended) issues.push_back(st.at(f.path));
      reported = true;  // or, training not ended, parsed again next time
      continue;
    }
    meta_workers = std::max(meta_workers, cf.num_workers);
    for (auto& c : cf.collections) {
      Merged& m = merged[c.name];
      m.include_regex.insert(c.include_regex.begin(), c.include_regex.end());
      m.tensor_names.insert(c.tensor_names.begin(), c.tensor_names.end());
      // parse_collections_json checked the text and its depth
      if (m.save_config.is_null() && !c.save_config.empty())
        m.save_config = nlohmann::json::parse(c.save_config, nullptr, false);
      if (m.reduction_config.is_null() && !c.reduction_config.empty())
        m.reduction_config = nlohmann::json::parse(c.reduction_config, nullptr, false);
    }
  }
  Transaction tx(db_);
  for (const auto& e : issues) report(e);
  const int expected = std::max({files_seen, meta_workers, expected_workers_});
  if (expected != expected_workers_) {
    Statement u(db_.handle(), "UPDATE trial SET expected_workers = ? WHERE trial_id = ?");
    u.bind(1, expected).bind(2, trial_id_).run();
    expected_workers_ = expected;
  }
  bool changed = false;
  std::vector<Collection> loaded;
  for (const auto& [name, m] : merged) {
    nlohmann::json def = {{"include_regex", std::vector<std::string>(m.include_regex.begin(), m.include_regex.end())},
                          {"tensor_names", std::vector<std::string>(m.tensor_names.begin(), m.tensor_names.end())}};
    if (!m.save_config.is_null()) def["save_config"] = m.save_config;
    if (!m.reduction_config.is_null()) def["reduction_config"] = m.reduction_config;
    const std::string text = def.dump();
    read.definitions.emplace(name, text);
    Statement q(db_.handle(), "SELECT collection_id, definition FROM collection WHERE trial_id = ? AND name = ?");
    q.bind(1, trial_id_).bind(2, name);
    Collection c;
    c.name = name;
    if (q.step()) {
      c.id = q.int64(0);
      if (q.text(1) != text) {
        Statement u(db_.handle(), "UPDATE collection SET definition = ? WHERE collection_id = ?");
        u.bind(1, text).bind(2, c.id).run();
        changed = true;
      }
    } else {
      Statement ins(db_.handle(), "INSERT INTO collection(trial_id, name, definition) VALUES (?, ?, ?)");
      ins.bind(1, trial_id_).bind(2, name).bind(3, text).run();
      c.id = db_.last_insert_rowid();
      changed = true;
    }
    c.tensor_names.insert(m.tensor_names.begin(), m.tensor_names.end());
    for (const auto& r : m.include_regex) {
      std::unique_ptr<PyRegex> re;
      if (Status st = PyRegex::compile(r, &re); st.is_ok()) {
        c.regexes.push_back(std::move(re));
      } else {
        report(st.prefixed("collection '" + name + "': ").at("collections/"));
        reported = true;
      }
    }
    loaded.push_back(std::move(c));
  }
  collections_ = std::move(loaded);
  if (changed) {
    Statement del(db_.handle(),
                  "DELETE FROM collection_member "
                  "WHERE collection_id IN (SELECT collection_id FROM collection WHERE trial_id = ?)");
    del.bind(1, trial_id_).run();
    for (const auto& [name, id] : tensors_.ids) add_memberships(id, name);
  }
  const std::vector<Status> membership_errors = take_membership_errors();
  for (const auto& e : membership_errors) report(e);
  try {
    insert_members();
  } catch (...) {
    discard();
    throw;
  }
  tx.commit();
  if (!reported && issues.empty() && membership_errors.empty()) collections_read_ = std::move(read);
}

}  // namespace trialdb
