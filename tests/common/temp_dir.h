// A fresh directory for one test (mkdtemp under the system temp folder), removed with everything
// in it when the test ends. Shared by the C++ test programs so none has to write its own.
#pragma once
#include <stdlib.h>

#include <filesystem>
#include <stdexcept>
#include <string>

namespace trialdb::test {

struct TempDir {
  std::filesystem::path path;
  explicit TempDir(const std::string& prefix = "trialdb_test") {
    std::string tmpl = (std::filesystem::temp_directory_path() / (prefix + "_XXXXXX")).string();
    if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed for " + tmpl);
    path = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string operator/(const std::string& name) const { return (path / name).string(); }
};

}  // namespace trialdb::test
