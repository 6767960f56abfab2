// Index files (index/<STEP/1000>/<STEP12>_<WORKER>.json): where each tensor of one
// (step, worker) lives in the event file, plus saved shapes. Parsing validates types and
// paths so a damaged or hostile index is reported, never followed outside the trial.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ingest/format/event_decoder.h"
#include "schema/status.h"

namespace trialdb {

struct IndexEntry {
  std::string tensor;
  uint64_t start = 0;
  uint64_t length = 0;
};

struct ShapeEntry {
  std::string tensor;
  std::vector<int64_t> shape;
};

struct IndexFile {
  Mode mode = Mode::kGlobal;
  int64_t mode_step = 0;
  std::optional<std::string> event_file;  // relative to the trial root, validated
  std::vector<IndexEntry> tensors;
  std::vector<ShapeEntry> shapes;
  // Entries left out because they are malformed (bad name, offsets or shape): what is wrong
  // with each, as the cause of an kInvalidInput issue the caller reports with the file and step.
  // The rest of the file is still usable.
  std::vector<std::string> skipped;
};

// "index/000000000/000000000012_worker_0.json" -> step 12, worker "worker_0". The worker is
// everything after the '_' that follows the 12-digit step (it may contain '_' itself).
bool parse_index_path(std::string_view path, int64_t* step, std::string* worker);

// Relative, no "..", no absolute or drive paths, no backslashes or NULs.
bool is_safe_relative_path(std::string_view path);

inline constexpr size_t kMaxTensorNameBytes = 4096;

// kInvalidInput when the file as a whole is unusable (then nothing is appended to out's lists);
// malformed entries only land in out->skipped. The caller adds the file and step (Status::at).
// Accepts exactly the JSON nlohmann::json accepts, without building a DOM (see index_file.cc).
Status parse_index_json(std::string_view text, IndexFile* out);

}  // namespace trialdb
