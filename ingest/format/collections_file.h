// Collections files (collections/.../worker_<W>_collections.json): named groups of tensors,
// by explicit name or Python regex. One file per worker; their count is the expected number of
// workers (or _meta.num_workers when larger).
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "schema/status.h"

namespace trialdb {

struct CollectionDef {
  std::string name;
  std::vector<std::string> include_regex;
  std::vector<std::string> tensor_names;
  // The collection's save_config and reduction_config as JSON text, empty when it has none: all
  // the catalog keeps of the rest of its definition (not tensor_names again, which can be long).
  std::string save_config, reduction_config;
};

struct CollectionsFile {
  std::vector<CollectionDef> collections;
  int num_workers = 0;  // _meta.num_workers, 0 when absent
};

// kInvalidInput (saying what is wrong) when the file is not a usable collections file; the
// caller adds the file name (Status::at).
Status parse_collections_json(std::string_view text, CollectionsFile* out);

// A collections file larger than this is an error, never read whole (smdebug's are kilobytes).
inline constexpr uint64_t kMaxCollectionsFileBytes = 64u << 20;

// smdebug finds collection files anywhere below collections/ by this suffix.
bool is_collections_path(std::string_view path);

}  // namespace trialdb
