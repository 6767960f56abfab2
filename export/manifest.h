// The export's bookkeeping, one small JSON file per trial (`_manifests/trial=<name>.json`, beside
// the datasets; engines skip names starting with '_'): which database and which trial (its
// identity, so a job re-ingested under a reused name is another trial) wrote the partition,
// the trial's change_seq it was exported at, and for every table its files.
//
// A table that grows by step is cut into ranges of global steps, one file each, that never
// overlap: a file is rewritten in place (same name) when a step of its range changed, and the
// steps that became visible since get a new file. A table replaced whole is one file.
//
// The manifest is written twice by an export that changes files: first with `pending` listing
// every file it may write, then, after the files, without. An export killed in between leaves
// the next one the list of files it must rewrite or remove. Nothing read from a manifest is
// trusted: every path must be a part file of its own table's partition (Manifest::parse).
#pragma once
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <vector>

namespace trialdb::exporter {

inline constexpr int64_t kBeforeAllSteps = std::numeric_limits<int64_t>::min();

struct ExportedFile {
  std::string path;  // relative to the export's root
  int64_t rows = 0;
  uint64_t bytes = 0;
  uint32_t crc32 = 0;  // of the whole file: an unchanged replacement is not written again
  // Tables that grow by step: the file holds the rows of global steps in (after_step, through_step].
  int64_t after_step = kBeforeAllSteps, through_step = kBeforeAllSteps;
};

struct TableState {
  // Tables that grow by step: the trial's visibility frontier (complete_through) when exported.
  int64_t through_step = kBeforeAllSteps;
  int64_t next_part = 0;
  std::vector<ExportedFile> files;  // by step range, in order
};

struct Manifest {
  std::string trial;
  std::string trial_uid;             // trial.uid
  std::string database_uid;          // database_identity.uid of the database that wrote it
  std::string database_path;         // that database's file, for messages
  int64_t change_seq = -1;           // trial.change_seq when exported (-1: every step counts as changed)
  std::vector<std::string> pending;  // files an unfinished export may have written
  std::map<std::string, TableState> tables;

  // Throws Error (kInvalidInput) naming `where` when the text is not a manifest of this trial,
  // or lists a path that is not a part file of its table's partition of this trial.
  static Manifest parse(const std::string& json, const std::string& trial, const std::string& where);
  // The manifest at `path` (relative to the export's root), of whichever trial that path is of.
  static Manifest parse_at(const std::string& json, const std::string& path, const std::string& where);
  std::string to_json() const;
};

// "trial=<name>" with the characters Hive escapes in partition values percent-encoded, so every
// engine maps the folder back to the trial's name; a name an engine reads as NULL (NULL,
// __HIVE_DEFAULT_PARTITION__) has its first character escaped too.
std::string partition_folder(const std::string& trial);
inline constexpr const char* kManifestFolder = "_manifests";
std::string manifest_path(const std::string& trial);
std::string part_path(const std::string& table, const std::string& trial, int64_t part);

}  // namespace trialdb::exporter
