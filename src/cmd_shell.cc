// trialdb shell: the stock sqlite3 shell on a trialdb database, opened read-only (-readonly),
// with the trialdb extension (tensor_* functions, regexp) already loaded.
//
// We exec sqlite3 rather than embed a shell: users get exactly the shell they know (dot
// commands, modes, history), and the extension is the same file any other SQLite program loads.
// The extension is looked up beside the binary, at <dir of trialdb>/../lib/trialdb.so, which is
// both the build tree layout (build/bin, build/lib) and an install layout (prefix/bin, prefix/lib).
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "src/commands.h"
#include "src/output.h"
#include "src/open_db.h"

namespace trialdb::cli {

namespace {

namespace fs = std::filesystem;

struct ShellArgs {
  std::string db;
  std::string extension;  // empty: beside the binary
  std::string sqlite3 = "sqlite3";
  std::vector<std::string> extra;
};

// The first executable called `name` on PATH (or name itself when it contains a slash).
std::string find_program(const std::string& name) {
  if (name.find('/') != std::string::npos) return access(name.c_str(), X_OK) == 0 ? name : "";
  const char* path = std::getenv("PATH");
  std::string p = path ? path : "/usr/local/bin:/usr/bin:/bin";
  size_t start = 0;
  while (start <= p.size()) {
    size_t end = p.find(':', start);
    if (end == std::string::npos) end = p.size();
    std::string dir = p.substr(start, end - start);
    std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    if (access(candidate.c_str(), X_OK) == 0 && fs::is_regular_file(candidate)) return candidate;
    start = end + 1;
  }
  return "";
}

std::string default_extension() {
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return "";
  return (self.parent_path().parent_path() / "lib" / "trialdb.so").lexically_normal().string();
}

// A dot-command argument: single quotes take the text literally in the sqlite3 shell.
std::string quote_dot_arg(const std::string& s) {
  if (s.find('\'') == std::string::npos) return "'" + s + "'";
  std::string q = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') q += '\\';
    q += c;
  }
  return q + "\"";
}

int run_shell(const ShellArgs& a) {
  std::error_code ec;
  // What every reading command refuses (no file, not a trialdb database, another version) is
  // refused here too, before the shell could create or alter the file.
  open_db(a.db, OpenMode::kReadOnly);
  std::string ext = a.extension.empty() ? default_extension() : a.extension;
  if (ext.empty() || !fs::is_regular_file(ext, ec)) {
    std::cerr << "trialdb shell: the trialdb SQLite extension is missing"
              << (ext.empty() ? std::string() : " (looked for " + ext + ")")
              << "; build it (cmake --build build) or give its path with --extension\n";
    return kExitError;
  }
  std::string shell = find_program(a.sqlite3);
  if (shell.empty()) {
    std::cerr << "trialdb shell: cannot find the sqlite3 shell '" << a.sqlite3
              << "' on PATH (install it: apt-get install sqlite3)\n";
    return kExitError;
  }
  std::vector<std::string> argv = {shell, "-readonly", "-cmd", ".load " + quote_dot_arg(ext), a.db};
  argv.insert(argv.end(), a.extra.begin(), a.extra.end());
  std::vector<char*> cargv;
  for (std::string& s : argv) cargv.push_back(s.data());
  cargv.push_back(nullptr);
  std::cout.flush();
  execv(shell.c_str(), cargv.data());
  std::cerr << "trialdb shell: cannot run " << shell << ": " << std::strerror(errno) << "\n";
  return kExitError;
}

}  // namespace

void add_shell(CLI::App& app) {
  auto args = std::make_shared<ShellArgs>();
  CLI::App* cmd =
      app.add_subcommand("shell",
                         "Open the sqlite3 shell on a database, read-only, with the trialdb extension loaded.\n"
                         "Anything after -- goes to sqlite3 (options such as -table, or SQL to run).\n"
                         "Example: trialdb shell --db trials.db -- -table \"SELECT * FROM trials\"");
  cmd->add_option("--db", args->db, "Database file")->required();
  cmd->add_option("--extension", args->extension, "The extension to load (default: ../lib/trialdb.so beside trialdb)");
  cmd->add_option("--sqlite3", args->sqlite3, "The sqlite3 shell to run (default: sqlite3 on PATH)");
  cmd->add_option("SQLITE3_ARGS", args->extra, "Arguments passed on to sqlite3 (after --)");
  cmd->callback([args] { exit_code() = run_shell(*args); });
}

}  // namespace trialdb::cli
