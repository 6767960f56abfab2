// Index file names and JSON for the writer. See index_file_writer.h.
#include "ingest/format/index_file_writer.h"

#include <cstdio>

#include "ingest/format/python_json.h"

namespace trialdb {

namespace {

constexpr int kStepDigits = 12;
constexpr int kIndexFolderDigits = 9;
constexpr int64_t kStepsPerIndexFolder = 1000;

// A non-negative number in `digits` digits, zero-padded.
std::string zero_padded(int64_t value, int digits) {
  char text[32];
  std::snprintf(text, sizeof text, "%0*lld", digits, static_cast<long long>(value));
  return text;
}

}  // namespace

std::string event_file_name(int64_t step, std::string_view worker) {
  const std::string s = zero_padded(step, kStepDigits);
  return "events/" + s + "/" + s + "_" + std::string(worker) + ".tfevents";
}

std::string index_folder_name(int64_t step) {
  return "index/" + zero_padded(step / kStepsPerIndexFolder, kIndexFolderDigits) + "/";
}

std::string index_file_name(int64_t step, std::string_view worker) {
  return index_folder_name(step) + zero_padded(step, kStepDigits) + "_" + std::string(worker) + ".json";
}

std::string index_file_json(Mode mode, int64_t mode_step, std::string_view event_file,
                            const std::vector<TensorPayloadEntry>& tensors,
                            const std::vector<ShapePayloadEntry>& shapes) {
  std::string o = "{\"meta\": {\"mode\": ";
  append_python_json_string(&o, mode_name(mode));
  o += ", \"mode_step\": " + std::to_string(mode_step);
  if (!tensors.empty()) {
    o += ", \"event_file_name\": ";
    append_python_json_string(&o, event_file);
  }
  o += "}, \"tensor_payload\": [";
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (i) o += ", ";
    o += "{\"tensorname\": ";
    append_python_json_string(&o, tensors[i].name);
    o += ", \"start_idx\": " + std::to_string(tensors[i].start_idx) +
         ", \"length\": " + std::to_string(tensors[i].length) + "}";
  }
  o += "], \"shape_payload\": [";
  for (size_t i = 0; i < shapes.size(); ++i) {
    if (i) o += ", ";
    o += "{\"tensorname\": ";
    append_python_json_string(&o, shapes[i].name);
    o += ", \"originalname\": ";
    append_python_json_string(&o, shapes[i].original_name);
    o += ", \"shape\": ";
    append_python_json_int_list(&o, shapes[i].shape);
    o += "}";
  }
  o += "]}";
  return o;
}

}  // namespace trialdb
