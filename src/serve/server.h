// `trialdb serve`: the HTTP server of the live web view (docs/SERVE.md).
#pragma once
#include <string>
#include <vector>

namespace trialdb::serve {

// Loopback: the default address, reachable from this machine only.
inline constexpr const char* kLoopback = "127.0.0.1";
inline constexpr int kDefaultPort = 6007;

struct ServeOptions {
  std::vector<std::string> databases;  // the first opened, the others ATTACHed
  std::string host = kLoopback;
  int port = kDefaultPort;  // 0: any free port (the printed URL says which)
  std::string token;        // when set, every /api/ request must carry it as a bearer token
};

// Opens the databases (throws Error before listening when one cannot be served), prints the
// URL on stdout and serves until the process is stopped.
void run_server(const ServeOptions& options);

// The server is a module of its own, build/lib/trialdb_serve.so, so that only `trialdb serve`
// loads cpp-httplib and runs its start-up (OpenSSL's); the executable opens it
// (schema/lazy_library.h) and calls run_server through this entry point (serve_module.cc).
inline constexpr const char* kServeModule = "trialdb_serve.so";
inline constexpr const char* kServeEntryPoint = "trialdb_serve_run";
using ServeEntryPoint = void(const ServeOptions* options);

}  // namespace trialdb::serve
