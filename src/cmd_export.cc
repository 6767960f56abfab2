// trialdb export: the trials of a database as Hive-partitioned Parquet datasets for Athena, Trino,
// Spark and DuckDB (export/exporter.h), into a folder or an S3 prefix; a re-export writes files for new steps
// only. Reads the database read-only.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <map>
#include <thread>

#include "export/ddl.h"
#include "export/exporter.h"
#include "export/s3_target.h"
#include "src/commands.h"
#include "src/open_db.h"
#include "src/output.h"
#include "src/progress.h"
#include "tensorboard/tensorboard_export.h"

namespace trialdb::cli {

namespace {

struct ExportArgs {
  std::string db, out, values = "pointers", ddl, endpoint, region;
  std::string tensorboard, tensor_regex, reductions = "mean,mean_abs,l2";
  bool path_style = false, replace = false, quiet = false;
  std::vector<std::string> trials;
};

const std::map<std::string, exporter::ValuesExport> kValuesChoices = {
    {"none", exporter::ValuesExport::kNone},
    {"pointers", exporter::ValuesExport::kPointers},
    {"inline", exporter::ValuesExport::kInline},
};

const std::map<std::string, exporter::Engine> kEngines = {
    {"athena", exporter::Engine::kAthena},
    {"trino", exporter::Engine::kTrino},
    {"spark", exporter::Engine::kSpark},
    {"duckdb", exporter::Engine::kDuckDb},
};

// --ddl: the statements for the engine; with --db, Athena's projection lists its trials.
void print_ddl(const ExportArgs& a) {
  std::vector<std::string> trials;
  if (!a.db.empty()) {
    std::unique_ptr<Database> db = open_db(a.db, OpenMode::kReadOnly);
    trials = a.trials.empty() ? all_trials(*db) : a.trials;
    require_trials(*db, trials);
  }
  std::string location = a.out;
  while (location.size() > 1 && location.back() == '/') location.pop_back();
  std::cout << exporter::engine_ddl(kEngines.at(a.ddl), location, kValuesChoices.at(a.values), trials);
}

// One row per table of a trial that got files, then the trials whose partitions were removed.
void print_reports(const exporter::ExportReport& report) {
  for (const std::string& trial : report.removed_trials)
    std::cerr << "trialdb export: removed the partitions of trial " << printable(trial)
              << ", which is no longer in the database\n";
  Table t{{"trial", "table", "files", "rows", "bytes"}, {}, {false, false, true, true, true}};
  for (const exporter::TableReport& r : report.tables)
    if (r.files_written)
      t.rows.push_back(
          {r.trial, r.table, std::to_string(r.files_written), std::to_string(r.rows), std::to_string(r.bytes)});
  if (t.rows.empty()) {
    std::cout << "nothing new to export\n";
    return;
  }
  print_table(t, Format::kTable, std::cout);
}

S3Options s3_options(const ExportArgs& a) {
  S3Options o;
  o.endpoint = a.endpoint;
  o.region = a.region;
  if (a.path_style) o.path_style = true;
  return o;
}

void run_export(const ExportArgs& a) {
  // Before the export's own connection: the readers must open the file it opens.
  exporter::OpenReader open_reader =
      exporter::same_file_reader(a.db, [](const std::string& path) { return open_db(path, OpenMode::kReadOnly); });
  std::unique_ptr<Database> db = open_db(a.db, OpenMode::kReadOnlyShared);
  reporting_corruption(*db, [&] {
    exporter::ExportOptions options;
    // Each file thread reads through a connection of its own (exporter.h), whose page cache it
    // fills: a bound on those.
    constexpr unsigned kMostFilesAtOnce = 4;
    options.threads = std::clamp(std::thread::hardware_concurrency(), 1u, kMostFilesAtOnce);
    options.open_reader = std::move(open_reader);
    options.values = kValuesChoices.at(a.values);
    options.replace = a.replace;
    // On a terminal: the values exported of all the export will write, and the Parquet bytes.
    ProgressLine bar;
    const auto start = std::chrono::steady_clock::now();
    if (!a.quiet && isatty(STDERR_FILENO))
      options.progress = [&](const exporter::ExportProgress& p) {
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        bar.draw({p.values_done, p.values_total, p.bytes_written, seconds, "values"});
      };
    if (a.trials.empty()) {
      options.trials = all_trials(*db);
    } else {
      require_trials(*db, a.trials);
      options.trials = a.trials;
    }
    std::unique_ptr<exporter::ExportTarget> target;
    if (a.out.rfind("s3://", 0) == 0) target = std::make_unique<exporter::S3Target>(a.out, s3_options(a));
    else target = std::make_unique<exporter::LocalTarget>(a.out);
    const exporter::ExportReport report = exporter::export_trials(*db, *target, options);
    bar.erase();
    if (!a.quiet) print_reports(report);
  });
}

// --tensorboard: TensorBoard runs instead of Parquet (tensorboard/tensorboard_export.h).
void run_tensorboard_export(const ExportArgs& a) {
  tensorboard::TensorBoardOptions options;
  options.tensor_regex = a.tensor_regex;
  options.reductions = tensorboard::parse_reductions(a.reductions);
  std::unique_ptr<Database> db = open_db(a.db, OpenMode::kReadOnly);
  reporting_corruption(*db, [&] {
    if (a.trials.empty()) {
      options.trials = all_trials(*db);
    } else {
      require_trials(*db, a.trials);
      options.trials = a.trials;
    }
    const std::vector<tensorboard::RunReport> runs = tensorboard::export_tensorboard(*db, a.tensorboard, options);
    if (a.quiet) return;
    Table t{{"trial", "run", "steps", "events", "file"}, {}, {false, false, true, true, false}};
    for (const tensorboard::RunReport& r : runs)
      t.rows.push_back({r.trial, r.run, std::to_string(r.steps), std::to_string(r.events), r.file});
    if (t.rows.empty()) {
      std::cout << "nothing new to export\n";
      return;
    }
    print_table(t, Format::kTable, std::cout);
  });
}

}  // namespace

void add_export(CLI::App& app) {
  auto a = std::make_shared<ExportArgs>();
  CLI::App* cmd = app.add_subcommand(
      "export", "Write the trials as Parquet datasets, one per public view (for Athena, Trino, Spark, DuckDB)");
  cmd->footer(
      "Layout: OUT/<view>/trial=<name>/part-<n>.parquet, and OUT/_manifests/trial=<name>.json saying\n"
      "which steps each file holds; exporting again writes files for the new steps only.\n"
      "Examples:\n"
      "  trialdb export --db trials.db --out /data/trials_parquet\n"
      "  trialdb export --ddl athena --db trials.db --out s3://team-bucket/trialdb\n"
      "  trialdb export --db trials.db --tensorboard runs/ && tensorboard --logdir runs/");
  cmd->add_option("--db", a->db, "Database file (with --ddl: optional, its trials listed for Athena)");
  CLI::Option* out = cmd->add_option(
      "--out", a->out, "Folder or s3://bucket/prefix to write the datasets into (with --ddl: where they are)");
  CLI::Option* tensorboard =
      cmd->add_option("--tensorboard", a->tensorboard,
                      "Write TensorBoard runs into this folder instead (DIR/<trial>/<mode>/; docs/TENSORBOARD.md)");
  out->excludes(tensorboard);
  cmd->add_option("--tensors", a->tensor_regex, "--tensorboard: only tensors matching this regex (Python re.search)")
      ->needs(tensorboard);
  cmd->add_option("--reductions", a->reductions,
                  "--tensorboard: the reductions written as scalars (min, max, mean, prod, std, variance, sum, l1, l2; "
                  "NAME_abs for |x|)")
      ->capture_default_str()
      ->needs(tensorboard)
      ->check(CLI::Validator(
          [](std::string& list) -> std::string {
            try {
              tensorboard::parse_reductions(list);
              return {};
            } catch (const Error& e) {
              return e.status().cause();
            }
          },
          "REDUCTIONS"));
  cmd->add_option("--trial", a->trials, "Export only this trial (repeatable; default: every trial)");
  cmd->add_option("--values", a->values,
                  "Raw values: none; pointers (value_locations: where each value is in the event files); "
                  "inline (also tensor_values with the raw bytes)")
      ->check(CLI::IsMember({"none", "pointers", "inline"}))
      ->capture_default_str();
  cmd->add_option("--endpoint", a->endpoint, "S3-compatible endpoint URL (else AWS_ENDPOINT_URL)");
  cmd->add_option("--region", a->region, "S3 region (else AWS_REGION / AWS_DEFAULT_REGION)");
  cmd->add_flag("--replace", a->replace,
                "Replace trials of the same name that another database exported into this folder");
  cmd->add_flag("--quiet,-q", a->quiet, "No progress bar and no report of what was written");
  cmd->add_flag("--path-style", a->path_style, "S3 path-style addressing (automatic with --endpoint)");
  cmd->add_option("--ddl", a->ddl, "Print the statements that make this engine read the export, and write nothing")
      ->check(CLI::IsMember({"athena", "trino", "spark", "duckdb"}));
  cmd->callback([a] {
    if (!a->ddl.empty()) {
      if (a->out.empty()) throw CLI::RequiredError("--out");
      return print_ddl(*a);
    }
    if (a->db.empty()) throw CLI::RequiredError("--db");
    if (!a->tensorboard.empty()) return run_tensorboard_export(*a);
    if (a->out.empty()) throw CLI::RequiredError("--out or --tensorboard");
    run_export(*a);
  });
}

}  // namespace trialdb::cli
