// What the export tests do to trials and folders: run trialdb, copy part of a synthetic trial (a
// job still training, a worker's file landing late), list an export's files.
#pragma once
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "common/run_process.h"

namespace trialdb::test {

inline int trialdb(const std::vector<std::string>& args, const std::string& out = "", const std::string& err = "") {
  std::vector<std::string> argv = {TRIALDB_BIN};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_process(argv, out, err);
}

// Copies the trial's collections and the index and event files of the (step, worker) pairs
// `keep` selects (names `<12-digit step>_<worker>.<ext>`), and its end marker when `ended`.
inline void copy_trial(const std::string& from, const std::string& to,
                       const std::function<bool(int64_t step, const std::string& worker)>& keep, bool ended = true) {
  namespace fs = std::filesystem;
  for (const auto& e : fs::recursive_directory_iterator(from)) {
    if (!e.is_regular_file()) continue;
    const std::string rel = fs::relative(e.path(), from).string();
    const std::string name = e.path().filename().string();
    if (name == "training_job_end.ts") {
      if (!ended) continue;
    } else if (rel.rfind("collections", 0) != 0) {
      const std::string worker = e.path().stem().string().substr(13);
      if (!keep(std::stoll(name.substr(0, 12)), worker)) continue;
    }
    fs::create_directories(fs::path(to) / fs::path(rel).parent_path());
    fs::copy_file(e.path(), fs::path(to) / rel, fs::copy_options::overwrite_existing);
  }
}

// Copies the index file of one (step, worker) of a trial: with its event file still missing, the
// ingest waits for it (a step whose events land late).
inline void copy_index_file(const std::string& from, const std::string& to, int64_t step, const std::string& worker) {
  namespace fs = std::filesystem;
  char name[32];
  std::snprintf(name, sizeof name, "%012lld_", static_cast<long long>(step));
  const fs::path rel = fs::path("index") / "000000000" / (std::string(name) + worker + ".json");
  fs::create_directories(fs::path(to) / rel.parent_path());
  fs::copy_file(fs::path(from) / rel, fs::path(to) / rel, fs::copy_options::overwrite_existing);
}

// Every file under `dir`, relative to it.
inline std::set<std::string> files_under(const std::string& dir) {
  namespace fs = std::filesystem;
  std::set<std::string> files;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file()) files.insert(fs::relative(e.path(), dir).string());
  return files;
}

}  // namespace trialdb::test
