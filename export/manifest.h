// The export's bookkeeping, one small JSON file per trial (`_manifests/trial=<name>.json`, beside
// the datasets; engines skip names starting with '_'): for every table the files written, each
// with its rows and the global steps it holds, and through which step the trial is exported.
// A re-export reads it to write files for new steps only; it is written last, after the files
// it lists, so a crash leaves at most a file the manifest does not know.
#pragma once
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace trialdb::exporter {

struct ExportedFile {
  std::string path;   // relative to the export's root
  int64_t rows = 0;
  uint64_t bytes = 0;
  uint32_t crc32 = 0;   // of the whole file: an unchanged replacement is not written again
  std::optional<int64_t> first_step, last_step;   // global steps, for tables that grow by step
};

struct TableState {
  // Rows of global steps up to this one are exported (tables that grow by step).
  std::optional<int64_t> through_step;
  int64_t next_part = 0;
  std::vector<ExportedFile> files;
};

struct Manifest {
  std::string trial;
  std::map<std::string, TableState> tables;

  // Throws Error (kInvalidInput) naming `where` when the text is not a manifest of this trial.
  static Manifest parse(const std::string& json, const std::string& trial, const std::string& where);
  std::string to_json() const;
};

// "trial=<name>" with the characters Hive escapes in partition values percent-encoded, so every
// engine maps the folder back to the trial's name.
std::string partition_folder(const std::string& trial);
std::string manifest_path(const std::string& trial);
std::string part_path(const std::string& table, const std::string& trial, int64_t part);

}  // namespace trialdb::exporter
