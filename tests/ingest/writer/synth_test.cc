// `trialdb synth` end to end: the file set it writes, determinism for a seed, and the round trip
// synth -> `trialdb ingest` -> public views holding exactly the steps, tensors and values
// written (checked against the event files themselves, decoded independently here).
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "ingest/format/crc32c.h"
#include "ingest/format/proto/smdebug_event.pb.h"
#include "ingest/writer/trial_writer.h"
#include "schema/value_blob.h"
#include "tests/common/temp_dir.h"

namespace trialdb {
using trialdb::test::TempDir;

namespace {

namespace fs = std::filesystem;

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

int run(const std::string& args) {
  std::string cmd = std::string(TRIALDB_BIN) + " " + args + " >/dev/null 2>&1";
  int rc = std::system(cmd.c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

std::set<std::string> relative_files(const fs::path& root) {
  std::set<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(root))
    if (e.is_regular_file()) out.insert(fs::relative(e.path(), root).string());
  return out;
}

TEST(Synth, WritesTheExpectedFileSet) {
  TempDir dir;
  fs::path out = dir.path / "t";
  ASSERT_EQ(run("synth " + out.string() + " --steps 25 --tensors 6 --elements 12 --workers 2 --eval-every 5"), 0);
  std::set<std::string> expect = {"training_job_end.ts", "collections/000000000/worker_0_collections.json",
                                  "collections/000000000/worker_1_collections.json"};
  for (int64_t s = 0; s < 25; ++s)
    for (const char* w : {"worker_0", "worker_1"}) {
      expect.insert(event_file_name(s, w));
      expect.insert(index_file_name(s, w));
    }
  EXPECT_EQ(relative_files(out), expect);

  auto coll = nlohmann::json::parse(read_file(out / "collections/000000000/worker_1_collections.json"));
  EXPECT_EQ(coll["_meta"]["num_workers"], 2);
  for (const char* c : {"weights", "biases", "gradients", "losses", "default", "all"})
    EXPECT_TRUE(coll["collections"].contains(c)) << c;
  EXPECT_EQ(coll["collections"]["weights"]["tensor_names"],
            nlohmann::json::array({"Net_fc0.weight", "Net_fc1.weight"}));
  // --tensors 6 cuts layer 1 after its weight: its gradient is written too.
  EXPECT_EQ(coll["collections"]["gradients"]["tensor_names"],
            nlohmann::json::array({"gradient/Net_fc0.bias", "gradient/Net_fc0.weight", "gradient/Net_fc1.weight"}));

  // Every 5th global step is EVAL (no gradients), mode steps count within each mode.
  int64_t train = 0, eval = 0;
  for (int64_t s = 0; s < 25; ++s) {
    auto idx = nlohmann::json::parse(read_file(out / index_file_name(s, "worker_0")));
    bool is_eval = s % 5 == 4;
    EXPECT_EQ(idx["meta"]["mode"], is_eval ? "EVAL" : "TRAIN") << s;
    EXPECT_EQ(idx["meta"]["mode_step"], is_eval ? eval++ : train++) << s;
    std::set<std::string> names;
    for (const auto& e : idx["tensor_payload"]) names.insert(e["tensorname"]);
    EXPECT_EQ(names.count("gradient/Net_fc0.weight"), is_eval ? 0u : 1u) << s;
    EXPECT_EQ(names.count("gradient/Net_fc1.weight"), is_eval ? 0u : 1u) << s;
    EXPECT_EQ(names.count("CrossEntropyLoss_output_0"), 1u) << s;
    EXPECT_EQ(names.size(), is_eval ? 5u : 8u) << s;
  }
}

TEST(Synth, DeterministicForASeedAndBadArgumentsFail) {
  TempDir dir;
  std::string a = (dir.path / "a").string(), b = (dir.path / "b").string(), c = (dir.path / "c").string();
  ASSERT_EQ(run("synth " + a + " --steps 3 --tensors 5 --elements 64 --seed 7 --dtype float16"), 0);
  ASSERT_EQ(run("synth " + b + " --steps 3 --tensors 5 --elements 64 --seed 7 --dtype float16"), 0);
  ASSERT_EQ(run("synth " + c + " --steps 3 --tensors 5 --elements 64 --seed 8 --dtype float16"), 0);
  std::string ev = event_file_name(1, "worker_0");
  EXPECT_EQ(read_file(fs::path(a) / ev), read_file(fs::path(b) / ev));
  EXPECT_NE(read_file(fs::path(a) / ev), read_file(fs::path(c) / ev));
  EXPECT_EQ(run("synth " + a + " --steps 3"), 1);  // existing, non-empty folder
  EXPECT_EQ(run("synth " + (dir.path / "d").string() + " --dtype complex64"), 2);
  EXPECT_EQ(run("synth " + (dir.path / "e").string() + " --steps 0"), 2);
}

// ---- round trip through the ingester ----

struct Written {
  std::string dtype_shape;  // "float32 [2,3]"
  std::string data;         // tensor_content
};
using Key = std::tuple<std::string, int64_t, std::string>;  // tensor, step, worker

// Reads what the trial holds straight from its index and event files.
std::map<Key, Written> read_trial(const fs::path& root, int64_t steps, int workers) {
  std::map<Key, Written> out;
  for (int64_t s = 0; s < steps; ++s)
    for (int w = 0; w < workers; ++w) {
      std::string worker = "worker_" + std::to_string(w);
      auto idx = nlohmann::json::parse(read_file(root / index_file_name(s, worker)));
      std::string file = read_file(root / event_file_name(s, worker));
      for (const auto& e : idx["tensor_payload"]) {
        uint64_t start = e["start_idx"], len = e["length"];
        uint64_t n;
        std::memcpy(&n, file.data() + start, 8);
        EXPECT_EQ(n + 16, len);
        pb::Event ev;
        EXPECT_TRUE(ev.ParseFromString(file.substr(start + 12, n)));
        const auto& t = ev.summary().value(0).tensor();
        std::vector<int64_t> shape;
        for (const auto& d : t.tensor_shape().dim()) shape.push_back(d.size());
        std::string dt = t.dtype() == 1 ? "float32" : t.dtype() == 19 ? "float16" : "other";
        // smdebug's Trial returns a saved 0-d value with shape [1] (see the fixtures' golden
        // "shape" vs "shape_api"), and tensor_values follows smdebug.
        std::string sh = shape.empty() ? "[1]" : shape_json(shape.data(), static_cast<int>(shape.size()));
        out[{e["tensorname"], s, worker}] = {dt + " " + sh, t.tensor_content()};
      }
    }
  return out;
}

struct Db {
  sqlite3* db = nullptr;
  explicit Db(const std::string& path) {
    EXPECT_EQ(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  }
  ~Db() { sqlite3_close(db); }
  template <class F>
  void each(const std::string& sql, F f) {
    sqlite3_stmt* st = nullptr;
    ASSERT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr), SQLITE_OK) << sqlite3_errmsg(db) << "\n" << sql;
    while (sqlite3_step(st) == SQLITE_ROW) f(st);
    sqlite3_finalize(st);
  }
  std::string text(sqlite3_stmt* st, int c) {
    auto p = sqlite3_column_text(st, c);
    return p ? reinterpret_cast<const char*>(p) : "<null>";
  }
};

TEST(SynthRoundTrip, IngestedViewsHoldExactlyWhatWasWritten) {
  TempDir dir;
  fs::path trial = dir.path / "rt";
  std::string db_path = (dir.path / "rt.db").string();
  const int64_t steps = 8;
  ASSERT_EQ(run("synth " + trial.string() + " --steps 8 --tensors 11 --elements 30 --workers 2 --eval-every 4"), 0);
  ASSERT_EQ(run("ingest " + trial.string() + " --db " + db_path), 0);
  auto written = read_trial(trial, steps, 2);
  ASSERT_FALSE(written.empty());
  Db db(db_path);

  int n = 0;
  db.each("SELECT trial, workers, ended FROM trials", [&](sqlite3_stmt* st) {
    EXPECT_EQ(db.text(st, 0), "rt");
    EXPECT_EQ(sqlite3_column_int(st, 1), 2);
    EXPECT_EQ(sqlite3_column_int(st, 2), 1);
    ++n;
  });
  EXPECT_EQ(n, 1);

  std::vector<std::string> got_steps;
  db.each("SELECT step, mode, mode_step, complete FROM steps WHERE trial = 'rt' ORDER BY step", [&](sqlite3_stmt* st) {
    got_steps.push_back(std::to_string(sqlite3_column_int64(st, 0)) + " " + db.text(st, 1) + " " +
                        std::to_string(sqlite3_column_int64(st, 2)) + " " + std::to_string(sqlite3_column_int(st, 3)));
  });
  std::vector<std::string> want_steps = {"0 TRAIN 0 1", "1 TRAIN 1 1", "2 TRAIN 2 1", "3 EVAL 0 1",
                                         "4 TRAIN 3 1", "5 TRAIN 4 1", "6 TRAIN 5 1", "7 EVAL 1 1"};
  EXPECT_EQ(got_steps, want_steps);

  std::set<std::string> want_tensors, got_tensors;
  for (const auto& [k, v] : written) want_tensors.insert(std::get<0>(k));
  db.each("SELECT tensor FROM tensors WHERE trial = 'rt'",
          [&](sqlite3_stmt* st) { got_tensors.insert(db.text(st, 0)); });
  EXPECT_EQ(got_tensors, want_tensors);
  EXPECT_EQ(got_tensors.size(), 13u);  // 11, the gradient of the last layer's weight, the loss

  std::map<std::string, std::set<std::string>> members;
  db.each("SELECT collection, tensor FROM collections WHERE trial = 'rt'",
          [&](sqlite3_stmt* st) { members[db.text(st, 0)].insert(db.text(st, 1)); });
  EXPECT_EQ(members["weights"], (std::set<std::string>{"Net_fc0.weight", "Net_fc1.weight", "Net_fc2.weight"}));
  EXPECT_EQ(members["gradients"],
            (std::set<std::string>{"gradient/Net_fc0.weight", "gradient/Net_fc0.bias", "gradient/Net_fc1.weight",
                                   "gradient/Net_fc1.bias", "gradient/Net_fc2.weight"}));
  EXPECT_EQ(members["losses"], (std::set<std::string>{"CrossEntropyLoss_output_0"}));
  EXPECT_EQ(members["all"], want_tensors);

  // Every value, bit for bit, with dtype and shape; nothing extra.
  std::map<Key, Written> got;
  db.each("SELECT tensor, step, worker, dtype, shape, value FROM tensor_values WHERE trial = 'rt'",
          [&](sqlite3_stmt* st) {
            TensorView v;
            std::vector<uint8_t> scratch;
            const Status decoded = decode_blob(sqlite3_column_blob(st, 5), sqlite3_column_bytes(st, 5), &v, &scratch);
            ASSERT_TRUE(decoded.is_ok()) << decoded.to_string();
            std::string shape = db.text(st, 4);
            shape.erase(std::remove(shape.begin(), shape.end(), ' '), shape.end());
            got[{db.text(st, 0), sqlite3_column_int64(st, 1), db.text(st, 2)}] = {
                db.text(st, 3) + " " + shape, std::string(reinterpret_cast<const char*>(v.data), v.data_bytes)};
          });
  EXPECT_EQ(got.size(), written.size());
  for (const auto& [k, w] : written) {
    auto it = got.find(k);
    ASSERT_NE(it, got.end()) << std::get<0>(k) << " step " << std::get<1>(k) << " " << std::get<2>(k);
    EXPECT_EQ(it->second.dtype_shape, w.dtype_shape) << std::get<0>(k);
    EXPECT_TRUE(it->second.data == w.data) << std::get<0>(k) << " step " << std::get<1>(k);
  }

  // The vanishing-gradient question from the reductions view agrees with the written bytes.
  int checked = 0;
  db.each(
      "SELECT tensor, step, worker, value FROM reductions WHERE trial = 'rt' AND reduction = 'mean' AND abs = 1 "
      "AND tensor IN (SELECT tensor FROM collections WHERE trial = 'rt' AND collection = 'gradients')",
      [&](sqlite3_stmt* st) {
        const Written& w = written.at({db.text(st, 0), sqlite3_column_int64(st, 1), db.text(st, 2)});
        double sum = 0;
        size_t n = w.data.size() / 4;
        for (size_t i = 0; i < n; ++i) {
          float f;
          std::memcpy(&f, w.data.data() + 4 * i, 4);
          sum += std::fabs(f);
        }
        EXPECT_NEAR(sqlite3_column_double(st, 3), sum / n, 1e-12);
        ++checked;
      });
  EXPECT_EQ(checked, 5 * 6 * 2);  // 5 gradients x 6 TRAIN steps x 2 workers
}

// Records over 64 KiB take the ingester's other decoding path (tensor_content is not copied
// out of the event file's bytes, see tensor_content_split.h); their values must arrive as well.
TEST(SynthRoundTrip, LargeTensorsArriveBitForBit) {
  TempDir dir;
  fs::path trial = dir.path / "big";
  std::string db_path = (dir.path / "big.db").string();
  ASSERT_EQ(run("synth " + trial.string() + " --steps 6 --tensors 4 --elements 80000 --eval-every 0"), 0);
  ASSERT_EQ(run("ingest " + trial.string() + " --db " + db_path + " --threads 2"), 0);
  auto written = read_trial(trial, 6, 1);
  Db db(db_path);
  size_t large = 0, same = 0, rows = 0;
  db.each("SELECT tensor, step, worker, value FROM tensor_values WHERE trial = 'big'", [&](sqlite3_stmt* st) {
    TensorView v;
    std::vector<uint8_t> scratch;
    const Status decoded = decode_blob(sqlite3_column_blob(st, 3), sqlite3_column_bytes(st, 3), &v, &scratch);
    ASSERT_TRUE(decoded.is_ok()) << decoded.to_string();
    const Written& w = written.at({db.text(st, 0), sqlite3_column_int64(st, 1), db.text(st, 2)});
    if (w.data.size() > (64u << 10)) ++large;
    if (w.data == std::string(reinterpret_cast<const char*>(v.data), v.data_bytes)) ++same;
    ++rows;
  });
  EXPECT_EQ(rows, written.size());
  EXPECT_EQ(same, rows);
  EXPECT_GE(large, 6u * 3);  // several tensors per step took the large-record path
}

TEST(SynthRoundTrip, ReductionsOnlyTrialHasShapesAndSavedReductions) {
  TempDir dir;
  fs::path trial = dir.path / "red";
  std::string db_path = (dir.path / "red.db").string();
  ASSERT_EQ(run("synth " + trial.string() + " --steps 3 --tensors 5 --elements 20 --eval-every 0 --reductions-only"),
            0);
  auto idx = nlohmann::json::parse(read_file(trial / index_file_name(1, "worker_0")));
  EXPECT_EQ(idx["tensor_payload"][0]["tensorname"], "smdebug/reductions/min/Net_fc0.weight");
  EXPECT_EQ(idx["shape_payload"][0]["shape"], nlohmann::json::array({4, 5}));
  ASSERT_EQ(run("ingest " + trial.string() + " --db " + db_path), 0);
  Db db(db_path);
  std::set<std::string> tensors;
  db.each("SELECT tensor FROM tensors", [&](sqlite3_stmt* st) { tensors.insert(db.text(st, 0)); });
  EXPECT_EQ(tensors,
            (std::set<std::string>{"Net_fc0.weight", "Net_fc0.bias", "relu0_output_0", "gradient/Net_fc0.weight",
                                   "gradient/Net_fc0.bias", "CrossEntropyLoss_output_0"}));
  int rows = 0;
  db.each("SELECT shape, value IS NULL FROM tensor_values WHERE tensor = 'Net_fc0.weight'", [&](sqlite3_stmt* st) {
    std::string shape = db.text(st, 0);
    shape.erase(std::remove(shape.begin(), shape.end(), ' '), shape.end());
    EXPECT_EQ(shape, "[4,5]");
    EXPECT_EQ(sqlite3_column_int(st, 1), 1);
    ++rows;
  });
  EXPECT_EQ(rows, 3);
  // The saved abs max of the loss equals its only element's magnitude; 18 reductions per value.
  int n = 0;
  db.each("SELECT count(*) FROM reductions WHERE tensor = 'Net_fc0.bias' AND step = 2",
          [&](sqlite3_stmt* st) { n = sqlite3_column_int(st, 0); });
  EXPECT_EQ(n, 18);
  double mx = 0, amx = 0;
  db.each(
      "SELECT abs, value FROM reductions WHERE tensor = 'CrossEntropyLoss_output_0' AND step = 0 AND reduction = 'max'",
      [&](sqlite3_stmt* st) { (sqlite3_column_int(st, 0) ? amx : mx) = sqlite3_column_double(st, 1); });
  EXPECT_GT(mx, 2.0);
  EXPECT_EQ(mx, amx);
}

// ---- synth --profile ----

const char* const kSmallProfile = R"({
 "steps_per_mode": {"TRAIN": 4, "EVAL": 2},
 "tensors": [
  {"name": "CrossEntropyLoss_output_0", "dtype": "float32", "shape": [1], "values_saved": 6,
   "modes": ["TRAIN", "EVAL"], "collections": ["losses"], "mean_zero_fraction": 0.0, "mean_p50": 2.0, "mean_range": 0.0},
  {"name": "gradient/fc.weight", "dtype": "float32", "shape": [10, 20], "values_saved": 4, "modes": ["TRAIN"],
   "collections": ["gradients"], "mean_zero_fraction": 0.0, "mean_p50": 0.0, "mean_range": 0.002},
  {"name": "relu_output_0", "dtype": "float64", "shape": [4, 50], "values_saved": 6, "modes": ["TRAIN", "EVAL"],
   "collections": ["default"], "mean_zero_fraction": 0.5, "mean_p50": 0.0, "mean_range": 4.0},
  {"name": "labels", "dtype": "int64", "shape": [7], "values_saved": 2, "modes": ["TRAIN", "EVAL"],
   "collections": ["labels", "extra"]},
  {"name": "predictions", "dtype": "float32", "shape": [50], "values_saved": 2, "modes": ["TRAIN", "EVAL"],
   "collections": ["predictions"], "classes": 3},
  {"name": "trees/Feature", "dtype": "string", "shape": [3], "values_saved": 6, "modes": ["TRAIN", "EVAL"],
   "collections": ["trees", "extra"]}
 ]
})";

TEST(SynthProfile, WritesTheProfilesTensorsModesAndValueCharacter) {
  TempDir dir;
  const fs::path profile = dir.path / "profile.json", trial = dir.path / "p";
  std::ofstream(profile) << kSmallProfile;
  const std::string db_path = (dir.path / "p.db").string();
  ASSERT_EQ(run("synth --profile " + profile.string() + " " + trial.string()), 0);
  ASSERT_EQ(run("ingest " + trial.string() + " --db " + db_path), 0);
  Db db(db_path);

  // 4 TRAIN and 2 EVAL steps interleaved evenly.
  std::string modes;
  db.each("SELECT mode FROM steps ORDER BY step", [&](sqlite3_stmt* st) { modes += db.text(st, 0) + " "; });
  EXPECT_EQ(modes, "TRAIN EVAL TRAIN TRAIN EVAL TRAIN ");

  // Each tensor as often as the profile says, in its modes, with its dtype and shape.
  std::map<std::string, std::string> saved;
  db.each(
      "SELECT tensor, group_concat(step || mode, ' '), min(dtype), min(replace(shape, ' ', '')) "
      "FROM (SELECT * FROM tensor_values ORDER BY step) GROUP BY tensor",
      [&](sqlite3_stmt* st) { saved[db.text(st, 0)] = db.text(st, 1) + " " + db.text(st, 2) + " " + db.text(st, 3); });
  EXPECT_EQ(saved["CrossEntropyLoss_output_0"], "0TRAIN 1EVAL 2TRAIN 3TRAIN 4EVAL 5TRAIN float32 [1]");
  EXPECT_EQ(saved["gradient/fc.weight"], "0TRAIN 2TRAIN 3TRAIN 5TRAIN float32 [10,20]");
  EXPECT_EQ(saved["relu_output_0"], "0TRAIN 1EVAL 2TRAIN 3TRAIN 4EVAL 5TRAIN float64 [4,50]");
  EXPECT_EQ(saved["labels"], "0TRAIN 3TRAIN int64 [7]");
  EXPECT_EQ(saved["trees/Feature"], "0TRAIN 1EVAL 2TRAIN 3TRAIN 4EVAL 5TRAIN string [3]");
  EXPECT_EQ(saved["predictions"], "0TRAIN 3TRAIN float32 [50]");
  EXPECT_EQ(saved.size(), 6u);

  std::map<std::string, std::set<std::string>> members;
  db.each("SELECT collection, tensor FROM collections",
          [&](sqlite3_stmt* st) { members[db.text(st, 0)].insert(db.text(st, 1)); });
  EXPECT_EQ(members["extra"], (std::set<std::string>{"labels", "trees/Feature"}));
  EXPECT_EQ(members["gradients"], (std::set<std::string>{"gradient/fc.weight"}));

  // The value character: the ReLU output half zeros and otherwise in (0, 4]; the gradient within
  // its range around 0; the loss within 5% of its median.
  db.each("SELECT sum(zero) * 1.0 / sum(count), min(p0), max(p100) FROM distributions WHERE tensor = 'relu_output_0'",
          [&](sqlite3_stmt* st) {
            EXPECT_NEAR(sqlite3_column_double(st, 0), 0.5, 0.1);
            EXPECT_EQ(sqlite3_column_double(st, 1), 0.0);
            EXPECT_LE(sqlite3_column_double(st, 2), 4.0);
            EXPECT_GT(sqlite3_column_double(st, 2), 3.0);
          });
  db.each("SELECT min(p0), max(p100), sum(zero) FROM distributions WHERE tensor = 'gradient/fc.weight'",
          [&](sqlite3_stmt* st) {
            EXPECT_GE(sqlite3_column_double(st, 0), -0.001);
            EXPECT_LT(sqlite3_column_double(st, 0), -0.0009);
            EXPECT_LE(sqlite3_column_double(st, 1), 0.001);
            EXPECT_EQ(sqlite3_column_int(st, 2), 0);
          });
  db.each(
      "SELECT min(value), max(value), count(DISTINCT value) FROM reductions "
      "WHERE tensor = 'CrossEntropyLoss_output_0' AND reduction = 'mean' AND abs = 0",
      [&](sqlite3_stmt* st) {
        EXPECT_GE(sqlite3_column_double(st, 0), 1.9);
        EXPECT_LE(sqlite3_column_double(st, 1), 2.1);
        EXPECT_GT(sqlite3_column_int(st, 2), 1);
      });

  // A tensor with classes holds class indices: 0, 1 and 2 (the extremes), whole numbers (the sums).
  db.each("SELECT sum(count), sum(zero), min(p0), max(p100) FROM distributions WHERE tensor = 'predictions'",
          [&](sqlite3_stmt* st) {
            EXPECT_EQ(sqlite3_column_int(st, 0), 100);
            EXPECT_GT(sqlite3_column_int(st, 1), 0);
            EXPECT_EQ(sqlite3_column_double(st, 2), 0.0);
            EXPECT_EQ(sqlite3_column_double(st, 3), 2.0);
          });
  db.each(
      "SELECT count(*), sum(value = round(value)) FROM reductions "
      "WHERE tensor = 'predictions' AND reduction = 'sum' AND abs = 0",
      [&](sqlite3_stmt* st) {
        EXPECT_EQ(sqlite3_column_int(st, 0), 2);
        EXPECT_EQ(sqlite3_column_int(st, 1), 2);
      });

  // Deterministic for a seed.
  const fs::path again = dir.path / "again";
  ASSERT_EQ(run("synth --profile " + profile.string() + " " + again.string()), 0);
  EXPECT_EQ(read_file(trial / event_file_name(3, "worker_0")), read_file(again / event_file_name(3, "worker_0")));
}

TEST(SynthProfile, ABadProfileWritesNothing) {
  TempDir dir;
  const fs::path profile = dir.path / "bad.json", out = dir.path / "out";
  std::ofstream(profile) << R"({"steps_per_mode": {"TRAIN": 2}, "tensors": [{"name": "x", "dtype": "complex64",
    "shape": [2], "values_saved": 2, "modes": ["TRAIN"], "collections": []}]})";
  EXPECT_EQ(run("synth --profile " + profile.string() + " " + out.string()), 1);
  EXPECT_FALSE(fs::exists(out));
  EXPECT_EQ(run("synth --profile " + (dir.path / "missing.json").string() + " " + out.string()), 1);
  EXPECT_FALSE(fs::exists(out));
  EXPECT_EQ(run("synth --profile " + profile.string() + " --steps 3 " + out.string()), 2);  // exclusive options
  std::ofstream(profile) << R"({"steps_per_mode": {"TRAIN": 2}, "tensors": [{"name": "x", "dtype": "float32",
    "shape": [2], "values_saved": 2, "modes": ["TRAIN"], "collections": [], "classes": -2}]})";
  EXPECT_EQ(run("synth --profile " + profile.string() + " " + out.string()), 1);  // classes is not a count
  EXPECT_FALSE(fs::exists(out));
}

}  // namespace
}  // namespace trialdb
