// trialdb serve: a live web view of the databases' trials, read-only (src/serve/, docs/SERVE.md).
#include "schema/lazy_library.h"
#include "src/commands.h"
#include "src/serve/server.h"

namespace trialdb::cli {

namespace {

// The server is in its own module, opened only by this command (src/serve/server.h).
void run_serve_module(const serve::ServeOptions& options) {
  static LazyLibrary module(module_path(serve::kServeModule), "trialdb serve");
  module.function<serve::ServeEntryPoint>(serve::kServeEntryPoint)(&options);
}

}  // namespace

void add_serve(CLI::App& app) {
  auto o = std::make_shared<serve::ServeOptions>();
  CLI::App* cmd = app.add_subcommand("serve", "Serve a live web view of the trials (read-only): charts, findings, SQL");
  cmd->footer(
      "Example:\n"
      "  trialdb serve --db trials.db            # then open the URL it prints\n"
      "  trialdb serve --db mine.db --db team.db --port 8080");
  cmd->add_option("--db", o->databases, "Database file (repeat to serve several as one view)")->required();
  cmd->add_option("--port", o->port, "Port to listen on (0: any free port)")->check(CLI::Range(0, 65535));
  cmd->add_option("--host", o->host,
                  "Address to listen on (default 127.0.0.1, this machine only; another one prints a warning)");
  cmd->add_option("--token", o->token,
                  "Require this bearer token on every request for data (the printed URL carries it)");
  cmd->callback([o] { run_serve_module(*o); });
}

}  // namespace trialdb::cli
