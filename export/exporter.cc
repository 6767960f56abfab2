// Exporting trials to Parquet datasets (exporter.h).
#include "export/exporter.h"

#include <limits>

#include "export/manifest.h"
#include "export/table_file.h"

namespace trialdb::exporter {

namespace {

// The trial's visibility frontier: every value of a global step up to it is in the public views
// and no later value is (the largest integer once the trial ended).
int64_t complete_through(Database& db, const std::string& trial) {
  Statement q(db.handle(), "SELECT complete_through FROM trial WHERE name = ?1");
  q.bind(1, trial);
  if (!q.step()) throw Error(ErrorKind::kInvalidInput, "no trial named '" + trial + "'", db.path());
  return q.int64(0);
}

Manifest read_manifest(ExportTarget& target, const std::string& trial) {
  const std::string path = manifest_path(trial);
  if (std::optional<std::string> text = target.read(path)) return Manifest::parse(*text, trial, target.describe(path));
  Manifest m;
  m.trial = trial;
  return m;
}

void write_manifest(ExportTarget& target, const Manifest& manifest) {
  const std::unique_ptr<OutputFile> out = target.create(manifest_path(manifest.trial));
  out->write(manifest.to_json());
  out->commit();
}

bool same_content(const ExportedFile& a, const WrittenFile& b) {
  return a.rows == b.rows && a.bytes == b.bytes && a.crc32 == b.crc32;
}

class TrialExport {
 public:
  TrialExport(Database& db, ExportTarget& target, const ExportOptions& options, const std::string& trial)
      : db_(db), target_(target), options_(options), trial_(trial), manifest_(read_manifest(target, trial)),
        through_(complete_through(db, trial)) {}

  void run(std::vector<TableReport>& reports) {
    for (const PublicTable& table : public_tables()) {
      if (!wanted(table, options_.values)) continue;
      TableReport report{trial_, table.name};
      if (table.global_step.empty())
        export_replaced(table, report);
      else
        export_new_steps(table, report);
      reports.push_back(report);
    }
    write_manifest(target_, manifest_);
    for (const std::string& path : superseded_) target_.remove(path);
  }

 private:
  // A table that grows by step: the steps after the last export, through the frontier.
  void export_new_steps(const PublicTable& table, TableReport& report) {
    TableState& state = manifest_.tables[table.name];
    const bool first = state.files.empty();
    const int64_t after = state.through_step.value_or(std::numeric_limits<int64_t>::min());
    if (!first && after >= through_) return;
    const std::string path = part_path(table.name, trial_, state.next_part);
    const std::unique_ptr<OutputFile> out = target_.create(path);
    const WrittenFile file = write_table_file(db_, table, trial_, StepRange{after, through_}, *out, options_.writer);
    state.through_step = through_;
    // The first export writes a file even without rows, so the dataset exists with its schema.
    if (file.rows == 0 && !first) return;
    out->commit();
    record(state, path, file, report);
  }

  // A table replaced whole: a new file when its content differs from the last one written.
  void export_replaced(const PublicTable& table, TableReport& report) {
    TableState& state = manifest_.tables[table.name];
    const std::string path = part_path(table.name, trial_, state.next_part);
    const std::unique_ptr<OutputFile> out = target_.create(path);
    const WrittenFile file = write_table_file(db_, table, trial_, std::nullopt, *out, options_.writer);
    if (!state.files.empty() && same_content(state.files.back(), file)) return;
    out->commit();
    for (const ExportedFile& old : state.files) superseded_.push_back(old.path);
    state.files.clear();
    record(state, path, file, report);
  }

  void record(TableState& state, const std::string& path, const WrittenFile& file, TableReport& report) {
    state.files.push_back({path, file.rows, file.bytes, file.crc32, file.first_step, file.last_step});
    ++state.next_part;
    ++report.files_written;
    report.rows += file.rows;
    report.bytes += file.bytes;
  }

  Database& db_;
  ExportTarget& target_;
  const ExportOptions& options_;
  const std::string& trial_;
  Manifest manifest_;
  int64_t through_;
  std::vector<std::string> superseded_;   // removed once the manifest no longer lists them
};

// A read transaction for the whole export: every file of one export sees one state.
class ReadSnapshot {
 public:
  explicit ReadSnapshot(Database& db) : db_(db) { db_.exec("BEGIN"); }
  ~ReadSnapshot() {
    try {
      db_.exec("COMMIT");
    } catch (const Error&) {   // a read transaction has nothing to lose
    }
  }
  ReadSnapshot(const ReadSnapshot&) = delete;
  ReadSnapshot& operator=(const ReadSnapshot&) = delete;

 private:
  Database& db_;
};

}  // namespace

std::vector<TableReport> export_trials(Database& db, ExportTarget& target, const ExportOptions& options) {
  std::vector<TableReport> reports;
  ReadSnapshot snapshot(db);
  for (const std::string& trial : options.trials) TrialExport(db, target, options, trial).run(reports);
  return reports;
}

}  // namespace trialdb::exporter
