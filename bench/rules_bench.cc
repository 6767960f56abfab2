// rules_bench: the per-step cost of evaluating every rule must not grow with the trial.
//
// Writes a synthetic trial with `trialdb synth` (default 10,020 steps, every 10th EVAL), ingests
// it, then evaluates all rules step by step through RuleRunner: steps 0..99 untimed, steps
// 100..119 timed, steps 120..9,999 untimed, steps 10,000..10,019 timed. Prints the
// median per-step time at step 100 and at step 10,000 and their ratio (target: <= 1.5).
//
// Each window of 20 steps is evaluated in one call (as `trialdb ingest --rules` does after a
// batch), so the time is the rules' own, not the per-call set-up.
//
//   rules_bench [--steps N] [--tensors T] [--elements E] [--keep DIR]
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

// Milliseconds per step of evaluating steps [from, from + n) in one call, the best of... one:
// a step is evaluated once, so each window is measured once.
double time_steps(trialdb::rules::RuleRunner& runner, int64_t from, int n) {
  runner.set_last_step(from - 1);
  runner.evaluate_new_steps();
  runner.set_last_step(from + n - 1);
  double t0 = now_ms();
  runner.evaluate_new_steps();
  return (now_ms() - t0) / n;
}

}  // namespace

int main(int argc, char** argv) {
  int64_t steps = 10020;
  int tensors = 6, elements = 256, window = 20;
  std::string keep;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i];
    if (a == "--steps") steps = std::atoll(argv[i + 1]);
    else if (a == "--tensors") tensors = std::atoi(argv[i + 1]);
    else if (a == "--elements") elements = std::atoi(argv[i + 1]);
    else if (a == "--keep") keep = argv[i + 1];
    else {
      std::fprintf(stderr, "rules_bench: unknown option %s\n", a.c_str());
      return 2;
    }
  }
  const int64_t late = steps - window;   // the late window: 10,000 by default
  if (late < 100 + window) {
    std::fprintf(stderr, "rules_bench: --steps must be at least %d\n", 100 + 2 * window);
    return 2;
  }
  fs::path dir = keep.empty() ? fs::temp_directory_path() / ("rules_bench_" + std::to_string(getpid())) : fs::path(keep);
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string bin = TRIALDB_BIN, trial = (dir / "trial").string(), db_path = (dir / "trial.db").string();
  run(bin + " synth '" + trial + "' --steps " + std::to_string(steps) + " --tensors " + std::to_string(tensors) +
      " --elements " + std::to_string(elements) + " --eval-every 10 --seed 7 > /dev/null");
  run(bin + " ingest '" + trial + "' --db '" + db_path + "' --name synth -q");

  double early, late_ms, bulk;
  int64_t n_rules;
  {
    trialdb::Database db(db_path, trialdb::OpenMode::kExisting);
    trialdb::rules::RuleOptions opt;
    trialdb::rules::RuleRunner runner(db, opt);
    n_rules = static_cast<int64_t>(runner.rules().size());
    runner.set_last_step(99);
    runner.evaluate_new_steps();
    early = time_steps(runner, 100, window);
    runner.set_last_step(late - 1);
    double t0 = now_ms();
    runner.evaluate_new_steps();
    bulk = (now_ms() - t0) / static_cast<double>(late - 100 - window);
    late_ms = time_steps(runner, late, window);
  }
  std::printf("rules_bench: %lld rules, synthetic trial of %lld steps x %d tensors of %d float32 (+ loss)\n",
              static_cast<long long>(n_rules), static_cast<long long>(steps), tensors, elements);
  std::printf("  per-step evaluation, mean of %d steps, at step 100:      %8.3f ms\n", window, early);
  std::printf("  per-step evaluation, mean of %d steps, at step %lld:   %8.3f ms\n", window,
              static_cast<long long>(late), late_ms);
  std::printf("  mean per step over the %lld steps between:              %8.3f ms\n",
              static_cast<long long>(late - 100 - window), bulk);
  std::printf("  ratio (step %lld / step 100): %.2f  (target <= 1.5)\n", static_cast<long long>(late), late_ms / early);
  std::printf("rules_step100_ms=%.4f rules_step%lld_ms=%.4f rules_ratio=%.3f\n", early, static_cast<long long>(late),
              late_ms, late_ms / early);
  if (keep.empty()) fs::remove_all(dir);
  return 0;
}
