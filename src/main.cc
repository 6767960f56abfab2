// trialdb: SageMaker Debugger trials as an SQLite analytical store. The command line front end.
#include <iostream>

#include "ingest/source/mapped_range.h"
#include "src/commands.h"
#include "src/output.h"

namespace trialdb::cli {
int& exit_code() {
  static int code = kExitOk;
  return code;
}
}  // namespace trialdb::cli

int main(int argc, char** argv) {
  using namespace trialdb::cli;
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
