// Writes what collections_file.h parses: a worker's collections file, as smdebug's hook exports
// its collections (Python json.dumps layout, keys in its order, _meta.num_workers last).
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace trialdb {

// "collections/000000000/<worker>_collections.json".
std::string collections_file_name(std::string_view worker);

// When a collection is saved in one mode.
struct SaveConfig {
  int save_interval = 1;
  int64_t start_step = 0;
  int64_t end_step = -1;  // -1 = null
};

// One collection as the hook exports it.
struct CollectionSpec {
  std::string name;
  std::vector<std::string> include_regex;
  std::vector<std::string> tensor_names;
  bool save_raw_tensor = true;
  std::string reductions;  // reduction_config.reductions, e.g. "min,max,abs_mean"
  bool save_shape = false;
  SaveConfig train, eval, predict, global;
  bool save_histogram = true;
};

// The collections file's text.
std::string collections_json(const std::vector<CollectionSpec>& collections, int num_workers);

}  // namespace trialdb
