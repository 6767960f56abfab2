// Exporting trials to Parquet datasets (exporter.h).
#include "export/exporter.h"

#include <signal.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <numeric>
#include <set>
#include <system_error>
#include <thread>

#include "export/manifest.h"
#include "export/read_snapshot.h"
#include "export/table_file.h"

namespace trialdb::exporter {

namespace {

// Files written at once at the most hold as many open files and writers: a bound on both.
constexpr size_t kFilesPerBatch = 16;

// Counts the export's changes to the target for kKillAfterEnv.
class KillPoint {
 public:
  KillPoint() {
    if (const char* n = std::getenv(kKillAfterEnv)) left_ = std::atoll(n);
  }
  void changed() {
    if (left_ > 0 && --left_ == 0) ::raise(SIGKILL);
  }

 private:
  long long left_ = 0;
};

// An export reads what this version's schema holds: the identities and change record (version
// 9), the reductions view's column `computed` (10), histogram blobs (11), ... (migrations.h). A
// read-only open reads an older database as it is, so an export of one asks for its upgrade (which
// only a command that writes may do) rather than failing on a missing column.
void require_export_schema(Database& db) {
  Statement q(db.handle(), "SELECT max(version) FROM schema_version");
  const int64_t version = q.step() ? q.int64(0) : 0;
  if (version >= kSchemaVersion) return;
  throw Error(ErrorKind::kUsage,
              "the database has schema version " + std::to_string(version) + ", older than this trialdb's (" +
                  std::to_string(kSchemaVersion) +
                  "), whose tables export reads. Upgrade it with `trialdb compact --db " + db.path() +
                  "` (or any command that writes to it, e.g. the next ingest), then export again",
              db.path());
}

struct DatabaseIdentity {
  std::string uid, path;
};

DatabaseIdentity database_identity(Database& db) {
  Statement q(db.handle(), "SELECT uid FROM database_identity");
  if (!q.step())
    throw Error(ErrorKind::kDatabase, "the database has no identity (database_identity is empty)", db.path());
  std::error_code ec;
  const std::filesystem::path absolute = std::filesystem::absolute(db.path(), ec);
  return {q.text(0), ec ? db.path() : absolute.lexically_normal().string()};
}

// What the export needs of a trial, read in the export's snapshot.
struct TrialRow {
  int64_t id = 0;
  std::string uid;
  int64_t change_seq = 0;
  int64_t complete_through = -1;  // the visibility frontier: rows of later steps are not in the views
};

TrialRow trial_row(Database& db, const std::string& trial) {
  Statement q(db.handle(), "SELECT trial_id, uid, change_seq, complete_through FROM trial WHERE name = ?1");
  q.bind(1, trial);
  if (!q.step()) throw Error(ErrorKind::kInvalidInput, "no trial named '" + trial + "'", db.path());
  return {q.int64(0), q.text(1), q.int64(2), q.int64(3)};
}

// The global steps whose values changed after `since` (trial.change_seq), in order.
std::vector<int64_t> changed_steps(Database& db, int64_t trial_id, int64_t since) {
  Statement q(db.handle(), "SELECT step FROM step WHERE trial_id = ?1 AND change_seq > ?2 ORDER BY step");
  q.bind(1, trial_id).bind(2, since);
  std::vector<int64_t> steps;
  while (q.step()) steps.push_back(q.int64(0));
  return steps;
}

// The export's progress (ExportProgress): files done, and the files being written (several at
// once when the target takes files in parallel: each reports from its own thread).
class ProgressCount {
 public:
  explicit ProgressCount(const std::function<void(const ExportProgress&)>& tell) : tell_(tell) {}
  void add_total(uint64_t values) { total_.values_total += values; }
  // A file about to be written: its number, under which what it reads counts as in flight until
  // written().
  size_t start_file() {
    std::lock_guard lock(mutex_);
    in_flight_.emplace_back();
    return in_flight_.size() - 1;
  }
  // For write_table_file, about file `file` of `values` values.
  RowsRead rows_read(size_t file, uint64_t values) {
    if (!tell_) return {};
    return [this, file, values](uint64_t rows, uint64_t bytes) {
      std::lock_guard lock(mutex_);
      in_flight_[file] = {std::min(rows, values), bytes};
      tell();
    };
  }
  void written(size_t file, uint64_t values, uint64_t bytes) {
    std::lock_guard lock(mutex_);
    in_flight_[file] = {};
    total_.values_done += values;
    total_.bytes_written += bytes;
    tell();
  }

 private:
  void tell() const {
    if (!tell_) return;
    ExportProgress now = total_;
    for (const auto& [values, bytes] : in_flight_) {
      now.values_done += values;
      now.bytes_written += bytes;
    }
    tell_(now);
  }
  const std::function<void(const ExportProgress&)>& tell_;
  std::mutex mutex_;
  ExportProgress total_;
  std::vector<std::pair<uint64_t, uint64_t>> in_flight_;  // per file: values read, bytes written
};

bool same_content(const ExportedFile& a, const WrittenFile& b) {
  return a.rows == b.rows && a.bytes == b.bytes && a.crc32 == b.crc32;
}

ExportedFile exported(const std::string& path, const WrittenFile& w, int64_t after, int64_t through) {
  return {path, w.rows, w.bytes, w.crc32, after, through};
}

class TrialExport {
 public:
  // `readers`: connections in `db`'s snapshot (read_snapshot.h), one per file thread besides this one.
  TrialExport(Database& db, const std::vector<std::unique_ptr<Database>>& readers, ExportTarget& target,
              const ExportOptions& options, const DatabaseIdentity& identity, KillPoint& kill, ProgressCount& progress,
              const std::string& trial)
      : db_(db),
        readers_(readers),
        target_(target),
        options_(options),
        identity_(identity),
        kill_(kill),
        progress_(progress),
        trial_(trial),
        row_(trial_row(db, trial)) {}

  // Decides which step ranges to write (reading the old manifest and the database only), and
  // counts their values into the progress.
  void plan() {
    read_old();
    next_.trial = trial_;
    next_.trial_uid = row_.uid;
    next_.database_uid = identity_.uid;
    next_.database_path = identity_.path;
    next_.change_seq = row_.change_seq;
    changed_ = changed_steps(db_, row_.id, same_job_ ? old_.change_seq : -1);
    for (const PublicTable& table : public_tables()) {
      if (!wanted(table, options_.values)) continue;
      reports_.push_back(TableReport{trial_, table.name});
      if (table.global_step.empty()) replaced_.push_back({&table, reports_.size() - 1});
      else plan_steps(table, reports_.size() - 1);
    }
    for (StepWork& w : steps_work_) {
      w.values = values_in_range(w.file.after_step, w.file.through_step);
      progress_.add_total(w.values);
    }
  }

  // Writes the tables replaced whole (when their content changed) and the planned step ranges.
  void run(std::vector<TableReport>& reports) {
    for (const auto& [table, report] : replaced_) plan_replaced(*table, report);
    // What no table will list: files of tables no longer exported, files a killed export left.
    std::set<std::string> superseded = old_paths();
    for (const auto& [name, s] : next_.tables)
      for (const ExportedFile& f : s.files) superseded.erase(f.path);
    for (const StepWork& w : steps_work_) superseded.erase(w.file.path);
    const bool files_change = !pending_.empty() || !steps_work_.empty() || !superseded.empty();
    if (files_change) {
      write_intent(superseded);
      for (Pending& p : pending_) commit(p.file, p.report, *p.out);
      write_ranges();
      for (const std::string& path : superseded) remove(path);
    }
    if (files_change || !has_old_ || next_.to_json() != old_.to_json()) write_manifest(next_);
    reports.insert(reports.end(), reports_.begin(), reports_.end());
  }

 private:
  // A file of a table replaced whole, written and waiting for its commit.
  struct Pending {
    std::unique_ptr<OutputFile> out;
    ExportedFile file;
    size_t report;
  };
  // A step range to write: an existing file's (rewritten in place) or a new one.
  struct StepWork {
    const PublicTable* table;
    size_t report;
    ExportedFile file;    // its path and range
    bool first;           // the table's first file: written even without rows
    uint64_t values = 0;  // in its range, for the progress
  };

  // The values (of every view that has a row per value) in a range of global steps.
  uint64_t values_in_range(int64_t after, int64_t through) {
    const auto known = values_in_range_.find({after, through});
    if (known != values_in_range_.end()) return known->second;
    Statement q(db_.handle(), R"sql(
      SELECT count(*)
      FROM value
      WHERE trial_id = ?1
        AND tensor_step + step_offset > ?2
        AND tensor_step + step_offset <= ?3)sql");
    q.bind(1, row_.id).bind(2, after).bind(3, through);
    const uint64_t n = q.step() ? static_cast<uint64_t>(q.int64(0)) : 0;
    values_in_range_[{after, through}] = n;
    return n;
  }

  void read_old() {
    const std::string path = manifest_path(trial_);
    const std::optional<std::string> text = target_.read(path);
    if (!text) return;
    old_ = Manifest::parse(*text, trial_, target_.describe(path));
    has_old_ = true;
    if (old_.database_uid != identity_.uid && !options_.replace)
      throw Error(ErrorKind::kUsage,
                  "trial '" + trial_ + "' of " + identity_.path + " is exported here already by another database, " +
                      old_.database_path + " (identity " + old_.database_uid +
                      "); pass --replace to replace it, or ingest the job under another --name",
                  target_.describe(path));
    same_job_ = old_.database_uid == identity_.uid && old_.trial_uid == row_.uid;
    dirty_.insert(old_.pending.begin(), old_.pending.end());
  }

  // Every file the old manifest knows of, and those an unfinished export may have written.
  std::set<std::string> old_paths() const {
    std::set<std::string> paths(old_.pending.begin(), old_.pending.end());
    for (const auto& [name, s] : old_.tables)
      for (const ExportedFile& f : s.files) paths.insert(f.path);
    return paths;
  }

  bool changed_within(int64_t after, int64_t through) const {
    const auto it = std::upper_bound(changed_.begin(), changed_.end(), after);
    return it != changed_.end() && *it <= through;
  }

  // A table replaced whole: written now, committed when its content differs from the file's.
  void plan_replaced(const PublicTable& table, size_t report) {
    const auto old = old_.tables.find(table.name);
    const bool had = old != old_.tables.end() && old->second.files.size() == 1;
    TableState& state = next_.tables[table.name];
    if (had) state = old->second;
    const std::string path = had ? state.files[0].path : part_path(table.name, trial_, 0);
    std::unique_ptr<OutputFile> out = target_.create(path);
    const size_t slot = progress_.start_file();
    const WrittenFile file =
        write_table_file(db_, table, trial_, std::nullopt, *out, options_.writer, progress_.rows_read(slot, 0));
    progress_.written(slot, 0, file.bytes);
    if (had && same_job_ && !dirty_.count(path) && same_content(state.files[0], file)) return;
    state.files = {exported(path, file, kBeforeAllSteps, kBeforeAllSteps)};
    state.next_part = std::max<int64_t>(state.next_part, 1);
    pending_.push_back({std::move(out), state.files[0], report});
  }

  // A table that grows by step: its ranges with a changed or newly visible step rewritten (all
  // of them for another job), and the steps after the last range in a new one.
  void plan_steps(const PublicTable& table, size_t report) {
    TableState& state = next_.tables[table.name];
    if (const auto old = old_.tables.find(table.name); old != old_.tables.end()) state = old->second;
    const int64_t visible_after = state.through_step;  // steps in (visible_after, frontier] appeared
    for (const ExportedFile& f : state.files) {
      const bool appeared = f.through_step > visible_after && f.after_step < row_.complete_through;
      if (!same_job_ || dirty_.count(f.path) || appeared || changed_within(f.after_step, f.through_step))
        steps_work_.push_back({&table, report, f, false});
    }
    const int64_t last = state.files.empty() ? kBeforeAllSteps : state.files.back().through_step;
    const bool grown = row_.complete_through > state.through_step;
    if (row_.complete_through > last &&
        (state.files.empty() || grown || !same_job_ || changed_within(last, row_.complete_through))) {
      ExportedFile f;
      f.path = part_path(table.name, trial_, state.next_part);
      f.after_step = last;
      f.through_step = row_.complete_through;
      steps_work_.push_back({&table, report, f, state.files.empty()});
    }
    state.through_step = row_.complete_through;
  }

  // The manifest as it was, plus every file this export may write or remove, under this
  // database's and trial's identity (-1: a killed export leaves every step to rewrite when the
  // job changed).
  void write_intent(const std::set<std::string>& superseded) {
    Manifest intent = old_;
    intent.trial = trial_;
    intent.trial_uid = row_.uid;
    intent.database_uid = identity_.uid;
    intent.database_path = identity_.path;
    if (!same_job_) intent.change_seq = -1;
    std::set<std::string> paths(dirty_.begin(), dirty_.end());
    paths.insert(superseded.begin(), superseded.end());
    for (const Pending& p : pending_) paths.insert(p.file.path);
    for (const StepWork& w : steps_work_) paths.insert(w.file.path);
    intent.pending.assign(paths.begin(), paths.end());
    write_manifest(intent);
  }

  // A step range's file, written and waiting for record().
  struct WrittenRange {
    std::unique_ptr<OutputFile> out;
    WrittenFile file;
    bool written = false;
    std::exception_ptr error;
  };

  // Writes the planned step ranges' files and records them in plan order. Where the target and
  // the connections allow it, up to options_.threads files are written at once, each file thread
  // reading through a connection of its own in the export's snapshot (or, without those, all of
  // them through the export's, whose calls SQLite serializes), a batch at a time, and committed in
  // plan order after their batch: what a killed export leaves is what it would leave written one
  // file at a time.
  void write_ranges() {
    const size_t threads = parallel_files();
    if (threads <= 1) {
      for (const StepWork& w : steps_work_) record(w, write_range(db_, w, target_.create(w.file.path)));
      return;
    }
    for (size_t first = 0; first < steps_work_.size(); first += kFilesPerBatch) {
      const size_t n = std::min(kFilesPerBatch, steps_work_.size() - first);
      std::vector<WrittenRange> batch(n);
      for (size_t i = 0; i < n; ++i) batch[i].out = target_.create(steps_work_[first + i].file.path);
      // Files of tables whose rows are expanded from each value's (histogram_buckets' buckets,
      // reductions' kinds) take longest: started first, the others fill in beside them.
      std::vector<size_t> order(n);
      std::iota(order.begin(), order.end(), 0);
      std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) {
        return expanded(*steps_work_[first + x].table) && !expanded(*steps_work_[first + y].table);
      });
      std::atomic<size_t> next{0};
      std::atomic<bool> failed{false};
      auto work = [&](Database& db) {
        for (size_t k; !failed && (k = next++) < n;) {
          WrittenRange& r = batch[order[k]];
          try {
            r = write_range(db, steps_work_[first + order[k]], std::move(r.out));
          } catch (...) {
            r.error = std::current_exception();
            failed = true;
          }
        }
      };
      std::vector<std::thread> helpers;
      try {
        for (size_t t = 1; t < std::min(threads, n); ++t)
          helpers.emplace_back(work, std::ref(readers_.empty() ? db_ : *readers_[t - 1]));
      } catch (const std::system_error&) {  // no thread to be had: those started and this one do it all
      }
      work(db_);
      for (std::thread& h : helpers) h.join();
      // As one at a time would: the files before the first that failed are committed, then its
      // error is thrown (a file after it may have failed first, or not been written).
      for (size_t i = 0; i < n; ++i) {
        if (batch[i].error) std::rethrow_exception(batch[i].error);
        if (!batch[i].written)
          for (const WrittenRange& r : batch)
            if (r.error) std::rethrow_exception(r.error);
        record(steps_work_[first + i], std::move(batch[i]));
      }
    }
  }

  size_t parallel_files() const {
    if (options_.threads <= 1 || steps_work_.size() <= 1 || !target_.writes_in_parallel()) return 1;
    if (!readers_.empty()) return std::min<size_t>(options_.threads, readers_.size() + 1);
    // Only a connection in SQLite's serialized mode has a mutex (OpenMode::kReadOnlyShared).
    return sqlite3_db_mutex(db_.handle()) ? options_.threads : 1;
  }

  static bool expanded(const PublicTable& t) { return t.source != RowSource::kView; }

  WrittenRange write_range(Database& db, const StepWork& w, std::unique_ptr<OutputFile> out) {
    const size_t slot = progress_.start_file();
    const WrittenFile file = write_table_file(db, *w.table, trial_, StepRange{w.file.after_step, w.file.through_step},
                                              *out, options_.writer, progress_.rows_read(slot, w.values));
    progress_.written(slot, w.values, file.bytes);
    return {std::move(out), file, true, nullptr};
  }

  // Commits a written range's file into the next manifest, or drops it when it is not needed.
  void record(const StepWork& w, WrittenRange written) {
    const WrittenFile& file = written.file;
    TableState& state = next_.tables[w.table->name];
    const auto at = std::find_if(state.files.begin(), state.files.end(),
                                 [&](const ExportedFile& f) { return f.path == w.file.path; });
    const bool rewrite = at != state.files.end();
    // A new range without rows needs no file: the next one starts where the last file ends. (A
    // killed export may have left one of its name.)
    if (!rewrite && file.rows == 0 && !w.first) {
      written.out.reset();
      if (dirty_.count(w.file.path)) remove(w.file.path);
      return;
    }
    const ExportedFile done = exported(w.file.path, file, w.file.after_step, w.file.through_step);
    commit(done, w.report, *written.out);
    if (rewrite) {
      *at = done;
    } else {
      state.files.push_back(done);
      ++state.next_part;
    }
  }

  void commit(const ExportedFile& file, size_t report, OutputFile& out) {
    out.commit();
    kill_.changed();
    TableReport& r = reports_[report];
    ++r.files_written;
    r.rows += file.rows;
    r.bytes += file.bytes;
  }

  void remove(const std::string& path) {
    target_.remove(path);
    kill_.changed();
  }

  void write_manifest(const Manifest& manifest) {
    const std::unique_ptr<OutputFile> out = target_.create(manifest_path(trial_));
    out->write(manifest.to_json());
    out->commit();
    kill_.changed();
  }

  Database& db_;
  const std::vector<std::unique_ptr<Database>>& readers_;
  ExportTarget& target_;
  const ExportOptions& options_;
  const DatabaseIdentity& identity_;
  KillPoint& kill_;
  ProgressCount& progress_;
  const std::string& trial_;
  const TrialRow row_;
  Manifest old_, next_;
  bool has_old_ = false, same_job_ = false;
  std::set<std::string> dirty_;  // files an unfinished export may have written: always rewritten
  std::vector<int64_t> changed_;
  std::vector<TableReport> reports_;
  std::vector<Pending> pending_;
  std::vector<StepWork> steps_work_;
  std::vector<std::pair<const PublicTable*, size_t>> replaced_;  // tables replaced whole, with their report
  std::map<std::pair<int64_t, int64_t>, uint64_t> values_in_range_;
};

// The partitions this database exported of trials it no longer has (removed or renamed):
// their files, then their manifest. Manifests of other databases are left alone.
std::vector<std::string> remove_gone_trials(Database& db, ExportTarget& target, const DatabaseIdentity& identity,
                                            KillPoint& kill) {
  std::set<std::string> current;
  for (Statement q(db.handle(), "SELECT name FROM trial"); q.step();) current.insert(manifest_path(q.text(0)));
  std::vector<std::string> removed;
  std::vector<std::string> names = target.list(kManifestFolder);
  std::sort(names.begin(), names.end());
  for (const std::string& name : names) {
    const std::string path = std::string(kManifestFolder) + "/" + name;
    if (name.empty() || name[0] == '.' || current.count(path)) continue;  // '.': a manifest being written
    const std::optional<std::string> text = target.read(path);
    if (!text) continue;
    const Manifest m = Manifest::parse_at(*text, path, target.describe(path));
    if (m.database_uid != identity.uid) continue;
    std::set<std::string> files(m.pending.begin(), m.pending.end());
    for (const auto& [table, s] : m.tables)
      for (const ExportedFile& f : s.files) files.insert(f.path);
    for (const std::string& file : files) {
      target.remove(file);
      kill.changed();
    }
    target.remove(path);  // last: a removal killed half-way is finished by the next export
    kill.changed();
    removed.push_back(m.trial);
  }
  return removed;
}

}  // namespace

ExportReport export_trials(Database& db, ExportTarget& target, const ExportOptions& options) {
  ExportReport report;
  require_export_schema(db);
  // Every file of one export reads one state: connections of their own for the file threads
  // besides this one, where files are written at once.
  const bool parallel = options.threads > 1 && target.writes_in_parallel() && options.open_reader;
  const ReadSnapshot snapshot(db, parallel ? options.threads - 1 : 0, options.open_reader);
  KillPoint kill;
  ProgressCount progress(options.progress);
  const DatabaseIdentity identity = database_identity(db);
  // Every trial planned first, so that the progress knows the whole export's values.
  std::vector<std::unique_ptr<TrialExport>> trials;
  std::set<std::string> planned;
  for (const std::string& trial : options.trials) {
    if (!planned.insert(trial).second) continue;  // --trial given twice
    trials.push_back(
        std::make_unique<TrialExport>(db, snapshot.readers(), target, options, identity, kill, progress, trial));
    trials.back()->plan();
  }
  for (const std::unique_ptr<TrialExport>& trial : trials) trial->run(report.tables);
  report.removed_trials = remove_gone_trials(db, target, identity, kill);
  return report;
}

}  // namespace trialdb::exporter
