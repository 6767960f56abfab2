// rules_bench: all rules over a 1,000-step trial, and the per-step cost while following, which
// must not grow with the trial.
//
// Writes a synthetic trial with `trialdb synth` (default 10,020 steps, every 10th EVAL) and
// ingests it. Then, through RuleRunner:
//   - on a copy of the database, all rules over steps 0..999 in one call (one batch), the
//     runner's set-up included: what `trialdb rules` does on a finished 1,000-step trial;
//   - on the database, as `ingest --follow --rules` does when one step completes per poll: steps
//     0..99 untimed, steps 100..119 timed one call per step, steps 120..9,998 in one batch
//     (untimed; a follower catching up), step 9,999 alone (timed on its own: it also clears what
//     the batch's folds kept of 9,879 steps, a cost of the batch's size, paid once), steps
//     10,000..10,019 timed one call per step. The mean per-step time at step 100 and at step
//     10,000 and their ratio (target: <= 1.5); one call per step is also the rules' share of the
//     latency from a step completing to its findings.
// Prints RESULT rows for bench/run. smdebug is not installed here: the 1,000-step row's
// reference is the measurement of smdebug's Trial API (51 s for the 20 rules over a
// real 1,000-step trial), not one made in this run.
//
// --rule NAME (repeatable) times only those rules: which rule's per-step cost grows.
//
//   rules_bench [--steps N] [--tensors T] [--elements E] [--keep DIR] [--rule NAME]...
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "rules_sql/rule_runner.h"
#include "schema/database.h"

namespace fs = std::filesystem;

namespace {

double now_ms() {
  using namespace std::chrono;
  return duration<double, std::milli>(steady_clock::now().time_since_epoch()).count();
}

void run(const std::string& cmd) {
  if (std::system(cmd.c_str()) != 0) {
    std::fprintf(stderr, "rules_bench: failed: %s\n", cmd.c_str());
    std::exit(1);
  }
}

// Mean milliseconds per step of evaluating steps [from, from + n), one call per step (a step is
// evaluated once, so each window is measured once).
double time_steps(trialdb::rules::RuleRunner& runner, int64_t from, int n) {
  runner.set_last_step(from - 1);
  runner.evaluate_new_steps();
  double t0 = now_ms();
  for (int64_t step = from; step < from + n; ++step) {
    runner.set_last_step(step);
    runner.evaluate_new_steps();
  }
  return (now_ms() - t0) / n;
}

// The measurement of smdebug's Trial API: the 20 rules over a real 1,000-step trial.
constexpr double kSmdebugThousandStepsSeconds = 51.0;

}  // namespace

int main(int argc, char** argv) {
  int64_t steps = 10020;
  int tensors = 6, elements = 256, window = 20;
  std::string keep;
  std::vector<std::string> only_rules;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i];
    if (a == "--steps") steps = std::atoll(argv[i + 1]);
    else if (a == "--tensors") tensors = std::atoi(argv[i + 1]);
    else if (a == "--elements") elements = std::atoi(argv[i + 1]);
    else if (a == "--keep") keep = argv[i + 1];
    else if (a == "--rule") only_rules.push_back(argv[i + 1]);
    else {
      std::fprintf(stderr, "rules_bench: unknown option %s\n", a.c_str());
      return 2;
    }
  }
  const int64_t late = steps - window;  // the late window: 10,000 by default
  if (late < 100 + window) {
    std::fprintf(stderr, "rules_bench: --steps must be at least %d\n", 100 + 2 * window);
    return 2;
  }
  fs::path dir =
      keep.empty() ? fs::temp_directory_path() / ("rules_bench_" + std::to_string(getpid())) : fs::path(keep);
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string bin = TRIALDB_BIN, trial = (dir / "trial").string(), db_path = (dir / "trial.db").string();
  run(bin + " synth '" + trial + "' --steps " + std::to_string(steps) + " --tensors " + std::to_string(tensors) +
      " --elements " + std::to_string(elements) + " --eval-every 10 --seed 7 > /dev/null");
  run(bin + " ingest '" + trial + "' --db '" + db_path + "' --name synth -q");

  // All rules over the first 1,000 steps in one batch, on a copy (the runner's set-up included).
  double thousand_s;
  {
    const std::string copy = (dir / "thousand.db").string();
    fs::copy_file(db_path, copy, fs::copy_options::overwrite_existing);
    double t0 = now_ms();
    trialdb::Database db(copy, trialdb::OpenMode::kExisting);
    trialdb::rules::RuleOptions opt;
    opt.last_step = 999;
    opt.rules = only_rules;
    trialdb::rules::RuleRunner runner(db, opt);
    runner.evaluate_new_steps();
    thousand_s = (now_ms() - t0) / 1000;
  }

  double early, late_ms, bulk, after_batch_ms;
  int64_t n_rules;
  {
    trialdb::Database db(db_path, trialdb::OpenMode::kExisting);
    trialdb::rules::RuleOptions opt;
    opt.rules = only_rules;
    trialdb::rules::RuleRunner runner(db, opt);
    n_rules = static_cast<int64_t>(runner.rules().size());
    runner.set_last_step(99);
    runner.evaluate_new_steps();
    early = time_steps(runner, 100, window);
    runner.set_last_step(late - 2);
    double t0 = now_ms();
    runner.evaluate_new_steps();
    bulk = (now_ms() - t0) / static_cast<double>(late - 1 - 100 - window);
    t0 = now_ms();
    runner.set_last_step(late - 1);
    runner.evaluate_new_steps();
    after_batch_ms = now_ms() - t0;
    late_ms = time_steps(runner, late, window);
  }
  std::printf("rules_bench: %lld rules, synthetic trial of %lld steps x %d tensors of %d float32 (+ loss)\n",
              static_cast<long long>(n_rules), static_cast<long long>(steps), tensors, elements);
  std::printf("  all rules over steps 0..999 in one batch:                %8.3f s\n", thousand_s);
  std::printf("  per-step evaluation, mean of %d steps, at step 100:      %8.3f ms\n", window, early);
  std::printf("  per-step evaluation, mean of %d steps, at step %lld:   %8.3f ms\n", window,
              static_cast<long long>(late), late_ms);
  std::printf("  mean per step over the %lld steps between (one batch):  %8.3f ms\n",
              static_cast<long long>(late - 1 - 100 - window), bulk);
  std::printf("  the one step after that batch:                           %8.3f ms\n", after_batch_ms);
  std::printf("  ratio (step %lld / step 100): %.2f  (target <= 1.5)\n", static_cast<long long>(late), late_ms / early);
  std::printf("rules_step100_ms=%.4f rules_step%lld_ms=%.4f rules_ratio=%.3f\n", early, static_cast<long long>(late),
              late_ms, late_ms / early);
  const double smdebug_ratio = kSmdebugThousandStepsSeconds / thousand_s;
  std::printf(
      "RESULT all %lld rules, 1,000 steps of %d x %d float32 in one batch|%.3f s|smdebug Trial API %.0f s (issue 19, "
      "not this run)|%.0fx|>= 100x|%s\n",
      static_cast<long long>(n_rules), tensors, elements, thousand_s, kSmdebugThousandStepsSeconds, smdebug_ratio,
      smdebug_ratio >= 100 ? "yes" : "no");
  std::printf(
      "RESULT rules while following: the first step after a batch of %lld steps|%.2f ms|step 100 %.2f "
      "ms|%.1f|(info)|\n",
      static_cast<long long>(late - 1 - 100 - window), after_batch_ms, early, after_batch_ms / early);
  std::printf("RESULT rules while following: one call per step, step %lld vs step 100|%.2f ms|%.2f ms|%.2f|<= 1.5|%s\n",
              static_cast<long long>(late), late_ms, early, late_ms / early, late_ms / early <= 1.5 ? "yes" : "no");
  if (keep.empty()) fs::remove_all(dir);
  return 0;
}
