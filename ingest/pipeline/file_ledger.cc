// The ledger of a trial's index files (file_ledger.h).
#include "ingest/pipeline/file_ledger.h"

#include <string_view>

namespace trialdb {

namespace {
// The index files of the layout (index/<9 digits>/<12 digits>_...): only they may move where a
// listing starts; a path recorded with its error may sort anywhere.
constexpr std::string_view kLayoutGlob = "index/[0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9]/[0-9]*";
}  // namespace

FileLedger::FileLedger(Database& db, int64_t trial_id)
    : db_(db),
      trial_id_(trial_id),
      is_ingested_(db.handle(), "SELECT 1 FROM ingested_file WHERE trial_id = ? AND path = ?"),
      insert_ingested_(db.handle(), "INSERT INTO ingested_file(trial_id, path) VALUES (?, ?)"),
      insert_error_(db.handle(),
                    "INSERT INTO ingest_error(trial_id, file, step, message) SELECT ?1, ?2, ?3, ?4 "
                    "WHERE NOT EXISTS (SELECT 1 FROM ingest_error WHERE trial_id = ?1 AND file = ?2 AND message = ?4)"),
      stored_tensors_(db.handle(),
                      "SELECT tn.name FROM step s "
                      "JOIN value v ON v.trial_id = s.trial_id AND v.tensor_step = s.tensor_step "
                      "AND v.step_offset = s.step - s.tensor_step "
                      "JOIN worker w ON w.worker_id = v.worker_id AND w.name = ?3 "
                      "JOIN tensor tn ON tn.tensor_id = v.tensor_id "
                      "WHERE s.trial_id = ?1 AND s.step = ?2") {
  Statement f(db_.handle(), "SELECT path FROM ingested_file WHERE trial_id = ?");
  f.bind(1, trial_id_);
  while (f.step()) ingested_.insert(f.text(0));
  Statement p(db_.handle(), "SELECT path, selection FROM partial_file WHERE trial_id = ?");
  p.bind(1, trial_id_);
  while (p.step()) partial_.emplace(p.text(0), p.text(1));
}

std::set<std::string> FileLedger::stored_tensors(int64_t step, const std::string& worker) {
  std::set<std::string> names;
  stored_tensors_.bind(1, trial_id_).bind(2, step).bind(3, worker);
  while (stored_tensors_.step()) names.insert(stored_tensors_.text(0));
  stored_tensors_.reset();
  return names;
}

void FileLedger::mark_partial(const std::string& path, const std::string& key) {
  if (partial_under(path, key)) return;
  Statement i(db_.handle(), "INSERT OR REPLACE INTO partial_file(trial_id, path, selection) VALUES (?, ?, ?)");
  i.bind(1, trial_id_).bind(2, path).bind(3, key).run();
  partial_[path] = key;
}

bool FileLedger::ingested_by_another(const std::string& path) {
  is_ingested_.bind(1, trial_id_).bind(2, path);
  const bool done = is_ingested_.step();
  is_ingested_.reset();
  if (done) ingested_.insert(path);
  return done;
}

void FileLedger::mark_ingested(const std::string& path) {
  insert_ingested_.bind(1, trial_id_).bind(2, path).run();
  ingested_.insert(path);
  if (waiting_.count(path)) forget_waiting(path);
  if (partial_.erase(path)) {
    Statement d(db_.handle(), "DELETE FROM partial_file WHERE trial_id = ? AND path = ?");
    d.bind(1, trial_id_).bind(2, path).run();
  }
}

void FileLedger::forget_waiting(const std::string& path) {
  waiting_.erase(path);
  Statement d(db_.handle(), "DELETE FROM waiting_file WHERE trial_id = ? AND path = ?");
  d.bind(1, trial_id_).bind(2, path).run();
}

std::vector<std::string> FileLedger::unlisted(const std::set<std::string>& listed,
                                              const std::string& start_after) const {
  std::vector<std::string> gone;
  for (const auto& w : waiting_)
    if (w > start_after && !listed.count(w)) gone.push_back(w);
  return gone;
}

void FileLedger::mark_waiting(const std::string& path) {
  waiting_.insert(path);
  Statement i(db_.handle(), "INSERT OR IGNORE INTO waiting_file(trial_id, path) VALUES (?, ?)");
  i.bind(1, trial_id_).bind(2, path).run();
}

void FileLedger::record_error(const Status& e) {
  insert_error_.bind(1, trial_id_).bind(2, e.file());
  if (e.step() != Status::kNoStep) insert_error_.bind(3, e.step());
  else insert_error_.bind_null(3);
  insert_error_.bind(4, e.cause()).run();
}

void FileLedger::reload_waiting() {
  waiting_.clear();
  Statement w(db_.handle(), "SELECT path FROM waiting_file WHERE trial_id = ?");
  w.bind(1, trial_id_);
  while (w.step()) waiting_.insert(w.text(0));
}

std::string FileLedger::list_start_after(int expected_workers) {
  Statement q(db_.handle(),
              "SELECT max(f.path) FROM ingested_file f WHERE f.trial_id = ?1 AND f.path GLOB ?2 AND f.path < "
              "(SELECT coalesce(min(printf('index/%09d/%012d', s.step / 1000, s.step)), 'index/~') FROM step s "
              "WHERE s.trial_id = ?1 AND (s.complete = 0 OR (SELECT count(*) FROM step_worker w "
              "                                              WHERE w.trial_id = ?1 AND w.step = s.step) < ?3)) "
              "AND f.path < (SELECT coalesce(min(path), 'index/~') FROM waiting_file w WHERE w.trial_id = ?1) "
              "AND f.path < (SELECT coalesce(min(path), 'index/~') FROM partial_file p WHERE p.trial_id = ?1)");
  q.bind(1, trial_id_).bind(2, kLayoutGlob).bind(3, expected_workers);
  if (q.step() && !q.is_null(0)) return q.text(0);
  return "";
}

}  // namespace trialdb
