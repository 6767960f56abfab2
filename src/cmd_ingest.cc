// trialdb ingest: read a trial (folder or s3://) into a database, once or following a live job.
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <iostream>
#include <optional>
#include <set>
#include <system_error>
#include <thread>

#include "ingest/format/collections_file.h"
#include "ingest/pipeline/ingester.h"
#include "ingest/pipeline/value_size_sample.h"
#include "ingest/source/source.h"
#include "ingest/store/write_combining_vfs.h"
#include "rules_sql/rule_runner.h"
#include "schema/database.h"
#include "schema/follower_claim.h"
#include "schema/py_regex.h"
#include "schema/status.h"
#include "src/commands.h"
#include "src/output.h"
#include "src/on_finding.h"
#include "src/open_db.h"
#include "src/progress.h"
#include "src/sql_file.h"
#include "src/timeout_option.h"

namespace trialdb::cli {

namespace {

// --interval: beyond these a value is a mistake, not a wish (a poll interval shorter than a file
// system's timestamp resolution is busy waiting, a longer one than an hour looks like a hang).
// --threads is bounded by kMaxThreads (ingest/pipeline/ingester.h).
constexpr double kMinInterval = 0.01;
constexpr double kMaxInterval = 3600;

// "0.01 to 3600": the --interval range as the help and the error say it.
std::string interval_range() {
  char text[64];
  std::snprintf(text, sizeof text, "%g to %g", kMinInterval, kMaxInterval);
  return text;
}

std::atomic<bool> g_stop{false};
void on_signal(int) { g_stop = true; }

struct IngestArgs {
  std::string path, db, name, endpoint, region, on_finding;
  std::vector<std::string> params, rule_names, rule_files;
  bool path_style = false;
  bool strict = false, compress = false, follow = false, rules = false, quiet = false, wal = false, exit_code = false;
  double interval = 0.2;
  double idle_timeout = 0;  // --follow: seconds without a new file before giving up (0: never)
  double rule_timeout = kDefaultRuleTimeout;
  double on_finding_timeout = kDefaultOnFindingTimeout;
  int threads = 0;
  // The selection and what is stored of raw values (ingest/pipeline/selection.h).
  std::string steps, tensors, values;
  std::vector<std::string> collections;
};

void report_errors(const IngestStats& s) {
  const size_t shown = 20;
  for (size_t i = 0; i < s.errors.size() && i < shown; ++i) {
    std::cerr << "trialdb ingest: " << printable(s.errors[i].to_string()) << "\n";
  }
  if (s.errors.size() > shown)
    std::cerr << "trialdb ingest: ... and " << s.errors.size() - shown
              << " more errors (SELECT * FROM ingest_errors)\n";
}

void print_findings(const std::vector<rules::Finding>& fs) {
  for (const auto& f : fs)
    std::cout << "finding: " << printable(f.trial) << " " << printable(f.rule) << " step " << f.step << " (" << f.mode
              << " " << f.mode_step << ") " << printable(f.tensor) << " " << printable(f.worker) << ": "
              << printable(f.message) << std::endl;
}

// --steps, --tensors, --collections and --values into the ingest's options; a malformed range
// or pattern throws (kUsage), before the database is created or opened.
void set_selection(const IngestArgs& a, IngestOptions* opt) {
  if (!a.steps.empty())
    if (Status st = parse_step_range(a.steps, &opt->selection); !st.is_ok()) throw Error(st);
  if (!a.tensors.empty()) {
    std::unique_ptr<PyRegex> compiled;
    if (Status st = PyRegex::compile(a.tensors, &compiled); !st.is_ok())
      throw Error(Status::usage("--tensors: " + st.cause()));
  }
  opt->selection.tensor_regex = a.tensors;
  opt->selection.collections = a.collections;
  opt->store_values = a.values != "none";
  opt->add_missing_values = a.values == "all";
}

// --collections: every name must be a collection the trial defines, checked before the database is
// created or written (else the ingest would create the trial and then refuse the selection): in
// its collections files, or else among the collections the database keeps of it (definitions only
// grow, so a file removed since still counts). Throws Error (kUsage) naming the unknown ones.
void check_collections(TrialSource& source, const IngestArgs& a, const std::string& trial) {
  std::set<std::string> defined;
  for (const SourceFile& f : source.list("collections/")) {
    if (!f.problem.is_ok() || !is_collections_path(f.path)) continue;
    std::optional<ReadBuffer> text;
    // An unreadable file is skipped here: the ingest reports it as always.
    if (!read_at_most(source, f.path, kMaxCollectionsFileBytes, &text).is_ok()) continue;
    CollectionsFile parsed;
    if (text && parse_collections_json(*text, &parsed).is_ok())
      for (const CollectionDef& c : parsed.collections) defined.insert(c.name);
  }
  std::error_code ec;
  const bool db_exists = std::filesystem::is_regular_file(a.db, ec) && std::filesystem::file_size(a.db, ec) > 0;
  std::vector<std::string> unknown;
  for (const std::string& name : a.collections)
    if (!defined.count(name)) unknown.push_back(name);
  if (!unknown.empty() && db_exists) {
    auto db = open_db(a.db, OpenMode::kReadOnly);
    Statement q(db->handle(),
                "SELECT c.name FROM collection c JOIN trial t ON t.trial_id = c.trial_id WHERE t.name = ?1");
    q.bind(1, trial);
    while (q.step()) defined.insert(q.text(0));
    std::erase_if(unknown, [&](const std::string& name) { return defined.count(name) > 0; });
  }
  if (unknown.empty()) return;
  throw Error(Status::usage(
                  "--collections: the trial defines no collection '" + join(unknown, "', '") +
                  "' (collections: " + (defined.empty() ? "none" : join({defined.begin(), defined.end()}, ", ")) + ")")
                  .at(source.root()));
}

int run(const IngestArgs& a) {
  // Every argument is checked before anything is opened: a failing command changes nothing.
  IngestOptions opt;
  opt.name = a.name;
  opt.strict = a.strict;
  opt.compress = a.compress;
  opt.threads = a.threads;
  set_selection(a, &opt);
  for (const std::string& f : a.rule_files) read_sql_file(f, "--rule-file");
  // Something other than a folder (a file) will never become a trial folder, not even for --follow.
  std::error_code ec;
  if (!is_s3_location(a.path) && std::filesystem::exists(a.path, ec) && !std::filesystem::is_directory(a.path, ec))
    throw Error(Status::usage("not a directory (expected a trial folder)").at(a.path));
  SourceOptions so;
  so.s3_endpoint = a.endpoint;
  so.s3_region = a.region;
  if (a.path_style) so.s3_path_style = true;
  if (a.follow) {
    // A job may not have created its output folder yet: following waits for it.
    struct sigaction sa {};
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, nullptr);
    sigaction(SIGTERM, &sa, nullptr);
    bool told = false;
    while (!g_stop && !is_s3_location(a.path) && !std::filesystem::is_directory(a.path)) {
      if (!told && !a.quiet) std::cerr << "trialdb ingest: waiting for " << printable(a.path) << " to appear\n";
      told = true;
      std::this_thread::sleep_for(std::chrono::duration<double>(a.interval));
    }
    if (g_stop) return kExitOk;
  }
  // A folder is stored by its canonical path, so ./t and $PWD/t are the same trial.
  std::string location = a.path;
  if (!is_s3_location(location)) {
    std::error_code canonical_error;
    const auto canonical = std::filesystem::canonical(location, canonical_error);
    if (!canonical_error) location = canonical.string();
  }
  // Counted, so that the progress bar and the summaries say how many bytes were read.
  auto source = std::make_unique<CountingSource>(open_source(location, so));
  // A location that is not a trial is an error before the database is created or changed;
  // --follow waits instead (a job writes index/ and events/ as it trains).
  // Half a trial (index/ without events/ or the reverse) is said here and ingested as far as it
  // goes: what cannot be read is recorded in ingest_errors as always.
  if (!a.follow) {
    const Status layout = check_trial_layout(*source);
    if (layout.kind() == ErrorKind::kUsage) throw Error(layout);
    if (!layout.is_ok()) std::cerr << "trialdb ingest: warning: " << printable(layout.to_string()) << "\n";
    // (--follow waits for collections files as for everything else.)
    if (!a.collections.empty())
      check_collections(*source, a, a.name.empty() ? default_trial_name(source->root()) : a.name);
  }
  // A new database takes the page size its trial's values call for (schema/page_size_policy.h).
  // Values ingested without their bytes (--values none) take no pages of their own, and a
  // selection of tensors is not known before the database is (a collection's members are in it):
  // both keep the smallest.
  const bool sampled = opt.store_values && opt.selection.selects_all_tensors() && is_new_database(a.db);
  const int page_size = sampled ? choose_page_size(sample_value_sizes(*source), page_size_limits()) : kPageSize;
  std::unique_ptr<Database> opened = open_db(a.db, OpenMode::kCreate, write_combining_vfs_name(), {}, page_size);
  Database& db = *opened;
  // A one-shot ingest loads through a rollback journal when it has the database to itself;
  // --follow keeps WAL, so the queries made while a job trains never wait.
  opt.bulk_load = !a.follow && !a.wal;
  ProgressBar progress(*source);
  if (!a.quiet && isatty(STDERR_FILENO) && !a.follow)
    opt.progress = [&progress](size_t done, size_t total) { progress(done, total); };
  // Rules run after each commit that completed steps, so findings appear while the job trains,
  // and after each pass, so steps owed by an earlier run (killed after its commit) are evaluated
  // even when nothing new completes. --on-finding commands run after each evaluation.
  std::unique_ptr<rules::RuleRunner> runner;
  std::set<int64_t> failed_deliveries;
  bool deliveries_failed = false;
  size_t reported_failures = 0;  // of runner->failures()
  size_t reported_notes = 0;     // of runner->notes()
  bool found_any = false;        // --exit-code: stop after this pass
  std::function<void(int64_t)> evaluate = [&](int64_t) {
    if (!runner) return;
    const std::vector<rules::Finding> found = runner->evaluate_new_steps();
    found_any |= !found.empty();
    print_findings(found);
    for (size_t i = reported_failures; i < runner->failures().size(); ++i)
      std::cerr << "trialdb ingest: " << printable(runner->failures()[i]) << "\n";
    reported_failures = runner->failures().size();
    for (size_t i = reported_notes; i < runner->notes().size(); ++i)
      if (!a.quiet) std::cerr << "trialdb ingest: note: " << printable(runner->notes()[i]) << "\n";
    reported_notes = runner->notes().size();
    if (!a.on_finding.empty())
      deliveries_failed |=
          !deliver_findings(*runner, a.on_finding, a.db, "ingest", a.on_finding_timeout, &failed_deliveries);
  };
  if (a.rules) opt.on_steps_completed = evaluate;
  Ingester ing(db, *source, opt);
  if (a.rules) {
    rules::RuleOptions ro;
    ro.trials = {ing.trial_name()};
    ro.params = a.params;
    ro.rules = a.rule_names;
    ro.rule_files = a.rule_files;
    ro.queue_deliveries = !a.on_finding.empty();
    ro.time_limit = a.rule_timeout;
    runner = std::make_unique<rules::RuleRunner>(db, ro);
  }
  IngestSummary summary(ing.trial_name(), *source);
  // A followed trial is busy: rm and rename refuse it while this claim is held. The claim is
  // looked at before every pass, so that nothing is written once the trial is gone anyway
  // (removed after the claim was taken for expired).
  std::unique_ptr<HeldClaim> claim;
  if (a.follow) claim = std::make_unique<HeldClaim>(db, ing.trial_id());
  auto last_beat = std::chrono::steady_clock::now();

  bool had_errors = false;
  auto last_file = std::chrono::steady_clock::now();  // when a pass last ingested a file
  while (true) {
    if (claim && !claim->held()) {
      std::cerr << "trialdb ingest: trial " << printable(ing.trial_name())
                << " was removed or renamed while it was followed; stopping, nothing more is written to it\n";
      return kExitError;
    }
    IngestStats s;
    try {
      s = ing.run_once();
    } catch (const Error& e) {
      // --strict stops at the first bad input (kInvalidInput); anything else fails the ingest
      // as it would without --strict (main prints it).
      if (!a.strict || e.kind() != ErrorKind::kInvalidInput) throw;
      std::cerr << "trialdb ingest: " << printable(e.what()) << " (--strict: stopped)\n";
      return kExitError;
    }
    had_errors |= !s.errors.empty();
    summary.add(s);
    evaluate(0);
    if (s.files_ingested) last_file = std::chrono::steady_clock::now();
    if (a.exit_code && found_any) {
      // SageMaker's RuleEvaluationConditionMet: the caller stops the training job.
      if (!a.quiet) std::cerr << "trialdb ingest: a rule found something; stopping (--exit-code)\n";
      return deliveries_failed || (runner && !runner->failures().empty()) ? kExitPartial : kExitFindings;
    }
    report_errors(s);
    if (!a.follow) {
      if (!a.quiet)
        std::cerr << "trialdb ingest: " << summary.total_line() << (s.ended ? "; training has ended" : "") << "\n";
      break;
    }
    if (!a.quiet && s.files_ingested) std::cerr << "trialdb ingest: " << summary.pass_line(s) << "\n";
    if (s.ended && s.files_waiting == 0) {  // everything before the end marker is in
      if (!a.quiet) std::cerr << "trialdb ingest: " << summary.ended_line(db) << "\n";
      break;
    }
    if (a.idle_timeout > 0 &&
        std::chrono::steady_clock::now() - last_file > std::chrono::duration<double>(a.idle_timeout)) {
      if (!a.quiet)
        std::cerr << "trialdb ingest: no new file for " << a.idle_timeout
                  << " s and no end marker; stopping (--idle-timeout)\n";
      break;
    }
    if (claim && std::chrono::steady_clock::now() - last_beat > std::chrono::duration<double>(kHeartbeatSeconds)) {
      claim->heartbeat();
      last_beat = std::chrono::steady_clock::now();
    }
    auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(a.interval);
    while (!g_stop && std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (g_stop) {
      if (!a.quiet)
        std::cerr << "trialdb ingest: stopped; all complete steps are kept (" << summary.total_line() << ")\n";
      break;
    }
  }
  return had_errors || deliveries_failed || (runner && !runner->failures().empty()) ? kExitPartial : kExitOk;
}

}  // namespace

void add_ingest(CLI::App& app) {
  auto a = std::make_shared<IngestArgs>();
  CLI::App* cmd = app.add_subcommand("ingest", "Ingest a trial (folder or s3://bucket/prefix) into a database");
  cmd->footer(
      "Examples:\n"
      "  trialdb ingest ./pt_bad_init --db trials.db\n"
      "  trialdb ingest s3://bucket/job/debug-output --db trials.db --name run1 --follow\n"
      "  trialdb ingest s3://bucket/job/debug-output --db trials.db --tensors Loss --steps 0:1000\n"
      "Re-running ingests only what is new. Exit codes: 0 ok, 1 failed, 4 finished with errors\n"
      "(bad input reported and skipped; see the ingest_errors view).");
  cmd->add_option("path", a->path, "Trial folder or s3://bucket/prefix")->required();
  cmd->add_option("--db", a->db, "Database file (created if missing)")->required();
  cmd->add_option("--name", a->name, "Trial name (default: the folder's base name)");
  cmd->add_flag("--strict", a->strict, "Stop at the first error instead of skipping bad input");
  cmd->add_flag("--compress", a->compress, "zlib-compress value blobs that shrink");
  cmd->add_option("--threads", a->threads,
                  "Decoding threads, 1 to " + std::to_string(kMaxThreads) + " (default: all cores)")
      ->check(CLI::Range(1, kMaxThreads));
  CLI::Option* follow_flag =
      cmd->add_flag("--follow", a->follow, "Keep ingesting while the trial grows; exit after training_job_end.ts");
  cmd->add_flag("--wal", a->wal,
                "Write through the WAL even when no one else has the database open (slower for large tensors; "
                "whoever opens the database during the ingest never waits for it). Always so with --follow");
  cmd->add_option("--interval", a->interval,
                  "Seconds between polls in --follow, " + interval_range() + " (default 0.2)")
      ->check(CLI::Validator(
          [](std::string& text) -> std::string {
            // CLI::Range lets NaN through (every comparison with it is false).
            char* end = nullptr;
            const double v = std::strtod(text.c_str(), &end);
            if (end == text.c_str() || *end || !std::isfinite(v) || v < kMinInterval || v > kMaxInterval)
              return "must be a number of seconds from " + interval_range() + ", got '" + text + "'";
            return {};
          },
          "SECONDS"));
  CLI::Option* rules_flag =
      cmd->add_flag("--rules", a->rules, "Evaluate the rules on each newly complete step (see trialdb rules)");
  cmd->add_option("--param", a->params, "With --rules: RULE.KEY=VALUE (repeatable)");
  cmd->add_option("--rule", a->rule_names, "With --rules: only this rule (repeatable; default: every rule)")
      ->needs(rules_flag);
  cmd->add_option("--rule-file", a->rule_files, "With --rules: a custom rule file (repeatable)")
      ->check(CLI::ExistingFile)
      ->needs(rules_flag);
  cmd->add_flag("--exit-code", a->exit_code,
                "With --rules: exit 3 after the pass that recorded a new finding (stop the training job); 4 if an "
                "--on-finding command failed")
      ->needs(rules_flag);
  cmd->add_option("--idle-timeout", a->idle_timeout,
                  "With --follow: stop when no new file arrived for this many seconds (a job that died without "
                  "an end marker)")
      ->check(CLI::PositiveNumber)
      ->needs(follow_flag);
  cmd->add_option("--on-finding", a->on_finding,
                  "With --rules: shell command run per new finding, at least once (see trialdb rules --help)")
      ->needs(rules_flag);
  add_timeout_option(cmd, &a->rule_timeout,
                     "With --rules: seconds a rule may take on one batch of steps; past it the rule is stopped and "
                     "reported (default " +
                         format_real(kDefaultRuleTimeout) + "; 0: no limit)",
                     "--rule-timeout")
      ->needs(rules_flag);
  add_timeout_option(cmd, &a->on_finding_timeout,
                     "With --on-finding: seconds the command may run before it is killed and reported; following "
                     "goes on (default " +
                         format_real(kDefaultOnFindingTimeout) + "; 0: no limit)",
                     "--on-finding-timeout")
      ->needs(rules_flag);
  cmd->add_option("--endpoint", a->endpoint, "S3-compatible endpoint URL (else AWS_ENDPOINT_URL)");
  cmd->add_option("--region", a->region, "S3 region (else AWS_REGION / AWS_DEFAULT_REGION)");
  cmd->add_flag("--path-style", a->path_style, "S3 path-style addressing (automatic with --endpoint)");
  cmd->add_flag("--quiet,-q", a->quiet, "No progress or summary");
  cmd->add_option("--steps", a->steps, "Only steps A <= step < B (A:B, A: or :B; smdebug's range_steps)");
  cmd->add_option("--tensors", a->tensors, "Only tensors whose name matches this Python regex (re.search)");
  cmd->add_option("--collections", a->collections, "Only tensors of these collections (with --tensors: either)")
      ->delimiter(',');
  cmd->add_option("--values", a->values,
                  "none: store reductions, distributions and value_locations but not the raw bytes; all: also "
                  "add the bytes of values ingested with none")
      ->check(CLI::IsMember({"all", "none"}));
  cmd->callback([a] {
    try {
      exit_code() = run(*a);
    } catch (const std::system_error& e) {
      // A thread that cannot be started (a pids or RLIMIT_NPROC limit): what was committed stays,
      // a rerun goes on from there.
      if (e.code() != std::errc::resource_unavailable_try_again) throw;
      throw Error(Status::io(std::string("cannot start a thread (") + e.what() +
                             "): the limit on processes or threads (ulimit -u, a container's pids limit) is reached; "
                             "run again with fewer --threads")
                      .at(a->path));
    }
  });
}

}  // namespace trialdb::cli
