// trialdb: SageMaker Debugger trials as an SQLite analytical store. The command line front end.
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "ingest/source/mapped_range.h"
#include "src/commands.h"
#include "src/output.h"

namespace trialdb::cli {
int& exit_code() {
  static int code = kExitOk;
  return code;
}
}  // namespace trialdb::cli

namespace {

// Every statement SQLite runs with a materialized subquery allocates and frees page caches of a
// few hundred KiB; the rule runner runs such statements per rule and step. With glibc's defaults
// (trim above 128 KiB) each free at the top of the heap returns the memory to the kernel and
// the next statement faults it in again, page by page (bench/README.md, "Rules: heap trimming").
// Memory is kept up to kHeapSlack instead; allocations up to kMmapThreshold come from the heap
// (setting one threshold turns off glibc's adaptive mmap threshold, whose ceiling this is).
constexpr int kHeapSlack = 64 << 20;
constexpr int kMmapThreshold = 32 << 20;

void tune_heap() {
#if defined(__GLIBC__)
  mallopt(M_TRIM_THRESHOLD, kHeapSlack);
  mallopt(M_MMAP_THRESHOLD, kMmapThreshold);
#endif
}

// Edit distance (insertions, deletions, substitutions, transpositions of neighbours).
size_t distance(const std::string& a, const std::string& b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i)
    for (size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] != b[j - 1])});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}

// Output that could not be written is a failure: a full disk or a closed pipe behind stdout (or
// stderr) turns the command's exit code into kExitError, with a message where one can be written.
int checked_output(int code) {
  std::cout.flush();
  const bool out_failed = !std::cout || std::fflush(stdout) != 0 || std::ferror(stdout);
  const int out_errno = errno;
  std::cerr.flush();
  const bool err_failed = !std::cerr || std::ferror(stderr);
  if (out_failed) {
    std::cerr << "trialdb: cannot write the output to standard output: " << std::strerror(out_errno) << "\n";
    return trialdb::cli::kExitError;
  }
  return err_failed ? trialdb::cli::kExitError : code;
}

// "; did you mean 'x'?" for the nearest candidate close enough to be a typo, else "".
std::string did_you_mean(const std::string& word, const std::vector<std::string>& candidates) {
  const std::string* best = nullptr;
  size_t best_d = std::max<size_t>(2, word.size() / 3) + 1;
  for (const std::string& c : candidates)
    if (const size_t d = distance(word, c); d < best_d) best = &c, best_d = d;
  return best ? "; did you mean '" + *best + "'?" : "";
}

// Every long option of a command and of the commands below it (plot's chart kinds).
void long_options(const CLI::App* app, std::vector<std::string>* out) {
  for (const CLI::Option* o : app->get_options())
    for (const std::string& n : o->get_lnames()) out->push_back("--" + n);
  for (const CLI::App* sub : app->get_subcommands([](const CLI::App*) { return true; })) long_options(sub, out);
}

// Unknown subcommands and options, named with the nearest known one, before CLI11 parses (it
// would report "a subcommand is required" or a missing --db instead). Returns the message, or
// "" when every name is known.
std::string unknown_names(CLI::App& app, int argc, char** argv) {
  if (argc < 2 || argv[1][0] == '-') return "";
  std::vector<std::string> commands;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
    commands.push_back(sub->get_name());
  const std::string command = argv[1];
  if (std::find(commands.begin(), commands.end(), command) == commands.end())
    return "trialdb: unknown subcommand '" + trialdb::cli::printable(command) + "'" + did_you_mean(command, commands);
  std::vector<std::string> options = {"--help"};
  long_options(app.get_subcommand(command), &options);
  for (int i = 2; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--") break;  // what follows is passed on (trialdb shell -- ...)
    if (arg.size() < 3 || arg.compare(0, 2, "--") != 0) continue;
    const std::string name = arg.substr(0, arg.find('='));
    if (std::find(options.begin(), options.end(), name) == options.end())
      return "trialdb " + command + ": unknown option '" + trialdb::cli::printable(name) + "'" +
             did_you_mean(name, options);
  }
  return "";
}

}  // namespace

int main(int argc, char** argv) {
  using namespace trialdb::cli;
  tune_heap();
  // Ingests map event files; one truncated meanwhile must not end the process (mapped_range.h).
  trialdb::MappedRange::install_sigbus_handler();
  CLI::App app{
      "trialdb: SageMaker Debugger trials as SQL.\n"
      "Example: trialdb ingest ./my_trial --db trials.db && trialdb info --db trials.db"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "trialdb 0.1.0");
  add_ingest(app);
  add_info(app);
  add_sql(app);
  add_synth(app);
  add_compare(app);
  add_plot(app);
  add_shell(app);
  add_rules(app);
  add_trial_commands(app);
  add_compact(app);
  add_export(app);
  add_serve(app);
  // Command-line errors quote the arguments: shown printable like every other message.
  app.failure_message([](const CLI::App* a, const CLI::Error& e) {
    std::string help =
        a->get_help_ptr() ? "Run with " + a->get_help_ptr()->get_name() + " for more information.\n" : "";
    return printable(e.what()) + "\n" + help;
  });
  if (const std::string unknown = unknown_names(app, argc, argv); !unknown.empty()) {
    std::cerr << unknown << "\nRun with --help for more information.\n";
    return kExitUsage;
  }
  // Errors say which command they come from: "trialdb <command>: ...".
  const std::string prefix = argc > 1 && argv[1][0] != '-' ? std::string("trialdb ") + argv[1] + ": " : "trialdb: ";
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return kExitUsage;
  } catch (const std::exception& e) {
    std::cerr << prefix << printable(e.what()) << "\n";
    return checked_output(kExitError);
  }
  return checked_output(exit_code());
}
