// Running DuckDB through node for the tests (duckdb_query.h).
#include "duckdb_query.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

extern char** environ;

namespace trialdb::test {

namespace {

std::string node_path() {
  for (const char* dir : {"/usr/local/bin", "/usr/bin", "/bin"}) {
    const std::string p = std::string(dir) + "/node";
    if (access(p.c_str(), X_OK) == 0) return p;
  }
  if (const char* path = getenv("PATH")) {
    std::stringstream ss(path);
    std::string dir;
    while (std::getline(ss, dir, ':'))
      if (!dir.empty() && access((dir + "/node").c_str(), X_OK) == 0) return dir + "/node";
  }
  return "";
}

std::string script() { return std::string(TRIALDB_DUCKDB_TEST_DIR) + "/duckdb_rows.js"; }

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace

std::string duckdb_unavailable() {
  if (node_path().empty()) return "node is not installed";
  if (!std::filesystem::exists(std::string(TRIALDB_DUCKDB_TEST_DIR) + "/node_modules/@duckdb/node-api"))
    return "@duckdb/node-api is missing: run `npm install` in tests/duckdb (scripts/setup.sh does)";
  return "";
}

std::vector<Row> duckdb_rows(const std::vector<std::string>& statements) {
  const std::string node = node_path();
  char out_tmpl[] = "/tmp/trialdb_duckdb_out_XXXXXX";
  char err_tmpl[] = "/tmp/trialdb_duckdb_err_XXXXXX";
  const int out_fd = mkstemp(out_tmpl), err_fd = mkstemp(err_tmpl);
  if (out_fd < 0 || err_fd < 0) throw std::runtime_error("mkstemp failed");
  std::vector<std::string> args = {node, script()};
  args.insert(args.end(), statements.begin(), statements.end());
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, out_fd, 1);
  posix_spawn_file_actions_adddup2(&fa, err_fd, 2);
  pid_t pid = 0;
  int status = -1;
  const int rc = posix_spawn(&pid, node.c_str(), &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc == 0) waitpid(pid, &status, 0);
  close(out_fd);
  close(err_fd);
  const std::string out = read_all(out_tmpl), err = read_all(err_tmpl);
  unlink(out_tmpl);
  unlink(err_tmpl);
  if (rc != 0) throw std::runtime_error("cannot run " + node + ": " + strerror(rc));
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) throw std::runtime_error("DuckDB: " + err);
  std::vector<Row> rows;
  std::stringstream lines(out);
  std::string line;
  while (std::getline(lines, line)) {
    Row row;
    for (const auto& c : nlohmann::json::parse(line))
      row.push_back(c.is_null() ? Cell() : Cell(c.get<std::string>()));
    rows.push_back(std::move(row));
  }
  return rows;
}

std::string double_cell(double v) {
  unsigned char bytes[sizeof v];
  std::memcpy(bytes, &v, sizeof v);
  static const char* hex = "0123456789abcdef";
  std::string s;
  for (unsigned char b : bytes) {
    s.push_back(hex[b >> 4]);
    s.push_back(hex[b & 15]);
  }
  return s;
}

}  // namespace trialdb::test
