// Runs a program for a test and waits for it: argv[0] is its path, standard output and error go
// to the given files ("" = /dev/null). Returns the exit code (-1 when it did not exit normally).
// Throws std::runtime_error when it cannot be started.
#pragma once
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>

#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

extern char** environ;

namespace trialdb::test {

inline int run_process(std::vector<std::string> args, const std::string& out_path = "",
                       const std::string& err_path = "") {
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const std::string out = out_path.empty() ? "/dev/null" : out_path;
  const std::string err = err_path.empty() ? "/dev/null" : err_path;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&fa, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) throw std::runtime_error("cannot run " + args[0] + ": " + std::strerror(rc));
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace trialdb::test
