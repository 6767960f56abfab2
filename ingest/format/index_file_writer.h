// Writes what index_file.h parses: the names of a step's event and index files, and the index
// JSON as smdebug's hook writes it (Python json.dumps layout, keys in its order).
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ingest/format/event_decoder.h"

namespace trialdb {

// "events/<STEP12>/<STEP12>_<worker>.tfevents" and "index/<STEP/1000, 9 digits>/<STEP12>_<worker>.json",
// STEP12 being the global step in 12 digits.
std::string event_file_name(int64_t step, std::string_view worker);
std::string index_file_name(int64_t step, std::string_view worker);
// The folder of a step's index files: "index/<STEP/1000, 9 digits>/".
std::string index_folder_name(int64_t step);

// One tensor_payload entry: where a tensor's record lies in the event file.
struct TensorPayloadEntry {
  std::string name;
  uint64_t start_idx = 0, length = 0;
};

// One shape_payload entry (a collection with save_shape).
struct ShapePayloadEntry {
  std::string name, original_name;
  std::vector<int64_t> shape;
};

// The index file's text. meta.event_file_name is written only when tensors are listed, as
// smdebug does for a step that saved shapes only.
std::string index_file_json(Mode mode, int64_t mode_step, std::string_view event_file,
                            const std::vector<TensorPayloadEntry>& tensors,
                            const std::vector<ShapePayloadEntry>& shapes);

}  // namespace trialdb
