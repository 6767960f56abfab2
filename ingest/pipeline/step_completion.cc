#include "ingest/pipeline/step_completion.h"

#include <chrono>
#include <limits>

namespace trialdb {

namespace {
double now_unix() { return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count(); }
}  // namespace

StepCompletion::StepCompletion(Database& db, int64_t trial_id)
    : db_(db),
      trial_id_(trial_id),
      step_mode_(db.handle(),
                 "SELECT mode, mode_step, tensor_step, complete FROM step WHERE trial_id = ? AND step = ?"),
      insert_step_(db.handle(),
                   "INSERT INTO step(trial_id, step, mode, mode_step, tensor_step) VALUES (?, ?, ?, ?, ?) "
                   "ON CONFLICT DO NOTHING"),
      insert_step_worker_(db.handle(), "INSERT OR IGNORE INTO step_worker(trial_id, step, worker_id) VALUES (?, ?, ?)"),
      next_change_(db.handle(), "UPDATE trial SET change_seq = change_seq + 1 WHERE trial_id = ?1"),
      stamp_step_(db.handle(),
                  "UPDATE step SET change_seq = (SELECT change_seq FROM trial WHERE trial_id = ?1) "
                  "WHERE trial_id = ?1 AND step = ?2") {}

void StepCompletion::check_mode(PreparedFile& f) {
  step_mode_.bind(1, trial_id_).bind(2, f.file.step);
  if (!step_mode_.step()) {
    step_mode_.reset();
    return;
  }
  const std::string mode = step_mode_.text(0);
  const int64_t mode_step = step_mode_.int64(1);
  step_mode_.reset();
  if (mode == mode_name(f.mode) && mode_step == f.mode_step) return;
  f.errors.push_back(Status::invalid("worker " + f.file.worker + " says step " + std::to_string(f.file.step) + " is " +
                                     mode_name(f.mode) + " step " + std::to_string(f.mode_step) +
                                     " but another worker wrote it as " + mode + " step " + std::to_string(mode_step) +
                                     "; kept as " + mode)
                         .at(f.file.path, f.file.step));
}

int64_t StepCompletion::record_step(const PreparedFile& f) {
  // smdebug files GLOBAL-mode values under their mode step, every other under the global step.
  int64_t tensor_step = f.mode == Mode::kGlobal ? f.mode_step : f.file.step;
  insert_step_.bind(1, trial_id_)
      .bind(2, f.file.step)
      .bind(3, std::string_view(mode_name(f.mode)))
      .bind(4, f.mode_step)
      .bind(5, tensor_step)
      .run();
  if (sqlite3_changes(db_.handle()) == 0) {  // another worker wrote the step first: its numbering holds
    step_mode_.bind(1, trial_id_).bind(2, f.file.step);
    if (step_mode_.step()) {
      tensor_step = step_mode_.int64(2);
      if (step_mode_.int64(3) != 0 && (!revised_ || f.file.step < *revised_)) revised_ = f.file.step;
    }
    step_mode_.reset();
  }
  return tensor_step;
}

void StepCompletion::record_step_worker(int64_t step, int64_t worker_id) {
  insert_step_worker_.bind(1, trial_id_).bind(2, step).bind(3, worker_id).run();
  touched_[step] = true;
  record_values_changed(step);
}

void StepCompletion::record_values_changed(int64_t step) {
  next_change_.bind(1, trial_id_).run();
  stamp_step_.bind(1, trial_id_).bind(2, step).run();
}

int64_t StepCompletion::complete(int expected_workers, bool ended, TensorSummaryWriter& summary) {
  int64_t through = -1;
  {
    Statement q(db_.handle(), "SELECT complete_through FROM trial WHERE trial_id = ?");
    if (q.bind(1, trial_id_).step()) through = q.int64(0);
  }
  const int64_t before = through;
  if (ended) {
    through = std::numeric_limits<int64_t>::max();
  } else {
    // Only a touched step can raise the mark: the highest one every expected worker wrote.
    Statement c(db_.handle(), "SELECT count(*) FROM step_worker WHERE trial_id = ? AND step = ?");
    for (auto it = touched_.rbegin(); it != touched_.rend() && it->first > through; ++it) {
      c.bind(1, trial_id_).bind(2, it->first);
      c.step();
      const bool full = c.int64(0) >= expected_workers;
      c.reset();
      if (full) {
        through = it->first;
        break;
      }
    }
  }
  if (through > before) {
    Statement u(db_.handle(), "UPDATE trial SET complete_through = ? WHERE trial_id = ?");
    u.bind(1, through).bind(2, trial_id_).run();
  }
  int64_t completed = 0;
  if (through >= 0) {
    // Steps newly under the mark: those above the old mark, and a touched step below it that
    // arrived late (its file waited while later steps completed).
    const double now = now_unix();
    Statement u(db_.handle(),
                "UPDATE step SET complete = 1, completed_at = ?1 "
                "WHERE trial_id = ?2 AND step > ?3 AND step <= ?4 AND complete = 0");
    u.bind(1, now).bind(2, trial_id_).bind(3, before).bind(4, through).run();
    completed += sqlite3_changes(db_.handle());
    Statement late(
        db_.handle(),
        "UPDATE step SET complete = 1, completed_at = ?1 WHERE trial_id = ?2 AND step = ?3 AND complete = 0");
    for (const auto& [step, unused] : touched_) {
      if (step > before) break;
      late.bind(1, now).bind(2, trial_id_).bind(3, step).run();
      if (sqlite3_changes(db_.handle()) > 0 && (!revised_ || step < *revised_)) revised_ = step;
      completed += sqlite3_changes(db_.handle());
    }
  }
  summary.finish_transaction(before, through);
  if (revised_) revise_rules_from(*revised_);
  touched_.clear();
  revised_.reset();
  return completed;
}

void StepCompletion::revise_rules_from(int64_t from_step) {
  // rules_sql/rules_base.sql's tables exist once rules were evaluated on the database.
  Statement has_rules(db_.handle(), "SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'rule_evaluated'");
  if (!has_rules.step()) return;
  Statement q(db_.handle(),
              "INSERT OR IGNORE INTO rule_rerun(trial, rule) "
              "SELECT DISTINCT e.trial, e.rule FROM rule_evaluated e JOIN trial t ON t.name = e.trial "
              "WHERE t.trial_id = ?1 AND e.step >= ?2");
  q.bind(1, trial_id_).bind(2, from_step).run();
}

}  // namespace trialdb
