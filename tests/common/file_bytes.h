// The whole content of a file, as bytes ("" when it cannot be opened): the C++ tests' way to
// keep a file's bytes to compare or restore.
#pragma once
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace trialdb::test {

inline std::string file_bytes(const std::filesystem::path& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

}  // namespace trialdb::test
