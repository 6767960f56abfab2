// index_file_writer.h and collections_file_writer.h: file names, and JSON texts laid out as
// smdebug's hook writes them. (The writer tests reproduce real hook files with them too.)
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "ingest/format/collections_file_writer.h"
#include "ingest/format/index_file_writer.h"

namespace trialdb {
namespace {

TEST(IndexFileWriter, FileNames) {
  EXPECT_EQ(event_file_name(3, "worker_0"), "events/000000000003/000000000003_worker_0.tfevents");
  EXPECT_EQ(index_file_name(3, "worker_0"), "index/000000000/000000000003_worker_0.json");
  EXPECT_EQ(index_file_name(999, "w"), "index/000000000/000000000999_w.json");
  EXPECT_EQ(index_file_name(123456789012, "w"), "index/123456789/123456789012_w.json");
}

TEST(IndexFileWriter, JsonLayout) {
  const std::string text = index_file_json(Mode::kEval, 4, "events/e.tfevents", {{"a", 0, 120}, {"b\xC3\xA9", 120, 64}},
                                           {{"s", "orig", {3, 0}}});
  EXPECT_EQ(text,
            "{\"meta\": {\"mode\": \"EVAL\", \"mode_step\": 4, \"event_file_name\": \"events/e.tfevents\"}, "
            "\"tensor_payload\": [{\"tensorname\": \"a\", \"start_idx\": 0, \"length\": 120}, "
            "{\"tensorname\": \"b\\u00e9\", \"start_idx\": 120, \"length\": 64}], "
            "\"shape_payload\": [{\"tensorname\": \"s\", \"originalname\": \"orig\", \"shape\": [3, 0]}]}");
  EXPECT_EQ(nlohmann::json::parse(text)["tensor_payload"][1]["tensorname"], "b\xC3\xA9");
}

TEST(IndexFileWriter, ShapeOnlyStepHasNoEventFileName) {
  EXPECT_EQ(index_file_json(Mode::kGlobal, 0, "events/e.tfevents", {}, {{"s", "s", {}}}),
            "{\"meta\": {\"mode\": \"GLOBAL\", \"mode_step\": 0}, \"tensor_payload\": [], "
            "\"shape_payload\": [{\"tensorname\": \"s\", \"originalname\": \"s\", \"shape\": []}]}");
}

TEST(CollectionsFileWriter, FileNameAndJsonLayout) {
  EXPECT_EQ(collections_file_name("worker_1"), "collections/000000000/worker_1_collections.json");
  CollectionSpec weights;
  weights.name = "weights";
  weights.include_regex = {"^w.*", "\"q\""};
  weights.reductions = "min,abs_max";
  weights.save_raw_tensor = false;
  weights.save_shape = true;
  weights.save_histogram = false;
  weights.train = {.save_interval = 10, .start_step = 5, .end_step = 100};
  CollectionSpec empty;
  empty.name = "empty";
  empty.tensor_names = {"t:0"};
  EXPECT_EQ(
      collections_json({weights, empty}, 3),
      "{\"collections\": {"
      "\"weights\": {\"name\": \"weights\", \"include_regex\": [\"^w.*\", \"\\\"q\\\"\"], \"tensor_names\": [], "
      "\"reduction_config\": {\"save_raw_tensor\": false, \"reductions\": \"min,abs_max\", \"save_shape\": true}, "
      "\"save_config\": {"
      "\"TRAIN\": {\"save_interval\": 10, \"save_steps\": [], \"start_step\": 5, \"end_step\": 100}, "
      "\"EVAL\": {\"save_interval\": 1, \"save_steps\": [], \"start_step\": 0, \"end_step\": null}, "
      "\"PREDICT\": {\"save_interval\": 1, \"save_steps\": [], \"start_step\": 0, \"end_step\": null}, "
      "\"GLOBAL\": {\"save_interval\": 1, \"save_steps\": [], \"start_step\": 0, \"end_step\": null}}, "
      "\"save_histogram\": false}, "
      "\"empty\": {\"name\": \"empty\", \"include_regex\": [], \"tensor_names\": [\"t:0\"], "
      "\"reduction_config\": {\"save_raw_tensor\": true, \"reductions\": \"\", \"save_shape\": false}, "
      "\"save_config\": {"
      "\"TRAIN\": {\"save_interval\": 1, \"save_steps\": [], \"start_step\": 0, \"end_step\": null}, "
      "\"EVAL\": {\"save_interval\": 1, \"save_steps\": [], \"start_step\": 0, \"end_step\": null}, "
      "\"PREDICT\": {\"save_interval\": 1, \"save_steps\": [], \"start_step\": 0, \"end_step\": null}, "
      "\"GLOBAL\": {\"save_interval\": 1, \"save_steps\": [], \"start_step\": 0, \"end_step\": null}}, "
      "\"save_histogram\": true}}, "
      "\"_meta\": {\"num_workers\": 3}}");
}

}  // namespace
}  // namespace trialdb
