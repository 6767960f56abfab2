// Collections file name and JSON for the writer. See collections_file_writer.h.
#include "ingest/format/collections_file_writer.h"

#include "ingest/format/python_json.h"

namespace trialdb {

namespace {

// smdebug writes every worker's collections file into this one folder.
constexpr std::string_view kCollectionsFolder = "collections/000000000/";
constexpr std::string_view kCollectionsFileSuffix = "_collections.json";

// {"save_interval": 1, "save_steps": [], "start_step": 0, "end_step": null}; this project never
// writes explicit save_steps.
void append_save_config(std::string* out, const SaveConfig& c) {
  out->append("{\"save_interval\": " + std::to_string(c.save_interval) +
              ", \"save_steps\": [], \"start_step\": " + std::to_string(c.start_step) +
              ", \"end_step\": " + (c.end_step < 0 ? std::string("null") : std::to_string(c.end_step)) + "}");
}

}  // namespace

std::string collections_file_name(std::string_view worker) {
  return std::string(kCollectionsFolder) + std::string(worker) + std::string(kCollectionsFileSuffix);
}

std::string collections_json(const std::vector<CollectionSpec>& collections, int num_workers) {
  std::string o = "{\"collections\": {";
  for (size_t i = 0; i < collections.size(); ++i) {
    const CollectionSpec& c = collections[i];
    if (i) o += ", ";
    append_python_json_string(&o, c.name);
    o += ": {\"name\": ";
    append_python_json_string(&o, c.name);
    o += ", \"include_regex\": ";
    append_python_json_string_list(&o, c.include_regex);
    o += ", \"tensor_names\": ";
    append_python_json_string_list(&o, c.tensor_names);
    o += std::string(", \"reduction_config\": {\"save_raw_tensor\": ") + python_json_bool(c.save_raw_tensor) +
         ", \"reductions\": ";
    append_python_json_string(&o, c.reductions);
    o += std::string(", \"save_shape\": ") + python_json_bool(c.save_shape) + "}, \"save_config\": {";
    o += "\"TRAIN\": ";
    append_save_config(&o, c.train);
    o += ", \"EVAL\": ";
    append_save_config(&o, c.eval);
    o += ", \"PREDICT\": ";
    append_save_config(&o, c.predict);
    o += ", \"GLOBAL\": ";
    append_save_config(&o, c.global);
    o += std::string("}, \"save_histogram\": ") + python_json_bool(c.save_histogram) + "}";
  }
  o += "}, \"_meta\": {\"num_workers\": " + std::to_string(num_workers) + "}}";
  return o;
}

}  // namespace trialdb
