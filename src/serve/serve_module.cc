// The entry point of the serve module (server.h: why a module), the one symbol it exports.
#include "src/serve/server.h"

extern "C" __attribute__((visibility("default"))) void trialdb_serve_run(const trialdb::serve::ServeOptions* options) {
  trialdb::serve::run_server(*options);
}
