// trialdb: SageMaker Debugger trials as an SQLite analytical store. The command line front end.
#include <iostream>

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

}  // namespace

int main(int argc, char** argv) {
  using namespace trialdb::cli;
  tune_heap();
  // Ingests map event files; one truncated meanwhile must not end the process (mapped_range.h).
  trialdb::MappedRange::install_sigbus_handler();
  CLI::App app{"trialdb: SageMaker Debugger trials as SQL.\n"
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
  // Command-line errors quote the arguments: shown printable like every other message.
  app.failure_message([](const CLI::App* a, const CLI::Error& e) {
    std::string help = a->get_help_ptr() ? "Run with " + a->get_help_ptr()->get_name() + " for more information.\n" : "";
    return printable(e.what()) + "\n" + help;
  });
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
    std::cerr << "trialdb: error: " << printable(e.what()) << "\n";
    return kExitError;
  }
  return exit_code();
}
