// TrialWriter unit tests: framing and CRCs, index offsets, protobuf bytes identical to the
// generated serializer, JSON layout, staged (live) writing, and byte-for-byte reproduction of
// real smdebug fixture files (event, index and collections files).
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "ingest/format/crc32c.h"
#include "ingest/format/proto/smdebug_event.pb.h"
#include "ingest/writer/trial_writer.h"
#include "tests/common/temp_dir.h"

namespace trialdb {
using trialdb::test::TempDir;

namespace {

namespace fs = std::filesystem;

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  EXPECT_TRUE(in.good()) << "cannot open " << p;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

fs::path fixture(const std::string& rel) { return fs::path(TRIALDB_TEST_DATA) / "fixtures" / rel; }

struct Record {
  uint64_t offset, total;
  std::string data;
  uint32_t len_crc, footer;
};

// Splits an event file into records, checking the length CRC of each.
std::vector<Record> split_records(const std::string& file) {
  std::vector<Record> out;
  size_t off = 0;
  while (off < file.size()) {
    EXPECT_GE(file.size() - off, 16u) << "truncated record at " << off;
    if (file.size() - off < 16) break;
    uint64_t len;
    std::memcpy(&len, file.data() + off, 8);
    Record r;
    r.offset = off;
    std::memcpy(&r.len_crc, file.data() + off + 8, 4);
    EXPECT_EQ(r.len_crc, masked_crc32c(file.data() + off, 8)) << "length crc at " << off;
    EXPECT_LE(off + 16 + len, file.size());
    r.data = file.substr(off + 12, len);
    std::memcpy(&r.footer, file.data() + off + 12 + len, 4);
    r.total = 16 + len;
    off += r.total;
    out.push_back(r);
  }
  return out;
}

TEST(TrialWriterNames, FileNamesFollowFormat) {
  EXPECT_EQ(event_file_name(3, "worker_0"), "events/000000000003/000000000003_worker_0.tfevents");
  EXPECT_EQ(index_file_name(3, "worker_0"), "index/000000000/000000000003_worker_0.json");
  EXPECT_EQ(index_file_name(1500, "_replica-0_task-1"), "index/000000001/000000001500__replica-0_task-1.json");
  EXPECT_EQ(collections_file_name("worker_1"), "collections/000000000/worker_1_collections.json");
  EXPECT_EQ(tf_dtype_number(DType::Float32), 1);
  EXPECT_EQ(tf_dtype_number(DType::Float16), 19);
  EXPECT_EQ(tf_dtype_number(DType::BFloat16), 14);
  EXPECT_EQ(tf_dtype_number(DType::UInt64), 23);
}

TEST(TrialWriterFraming, ConstantFooterAndRealCrc) {
  for (bool real : {false, true}) {
    TempDir dir;
    TrialWriterOptions opt;
    opt.real_data_crc = real;
    opt.wall_time = 1234.5;
    TrialWriter w(dir.path.string(), opt);
    std::vector<float> a = {1.5f, -2.0f, 3.25f, 0.0f, 7.0f, 8.0f};
    int64_t i64 = -42;
    {
      auto s = w.begin_step(7, "worker_0", TrialMode::kTrain, 5);
      s->add_tensor("layer/w", DType::Float32, {2, 3}, a.data(), a.size() * 4);
      s->add_tensor("count", DType::Int64, {}, &i64, 8);
      s->add_tensor("empty", DType::Float32, {0, 4}, nullptr, 0);
      s->close();
    }
    std::string file = read_file(dir.path / event_file_name(7, "worker_0"));
    auto recs = split_records(file);
    ASSERT_EQ(recs.size(), 3u);
    for (const auto& r : recs) {
      if (real) EXPECT_EQ(r.footer, masked_crc32c(r.data.data(), r.data.size()));
      else EXPECT_EQ(r.footer, smdebug_constant_footer());
      EXPECT_NE(r.footer, real ? smdebug_constant_footer() : masked_crc32c(r.data.data(), r.data.size()));
    }
  }
}

// Builds the Event the generated classes would build for a tensor, the way smdebug does.
pb::Event reference_event(double wall, int64_t step, const std::string& tag, int dtype,
                          const std::vector<int64_t>& shape, const std::string& content, const std::string& mode,
                          int64_t mode_step) {
  pb::Event ev;
  ev.set_wall_time(wall);
  ev.set_step(step);
  auto* v = ev.mutable_summary()->add_value();
  v->set_tag(tag);
  auto* t = v->mutable_tensor();
  t->set_dtype(dtype);
  auto* sh = t->mutable_tensor_shape();
  for (int64_t d : shape) {
    auto* dim = sh->add_dim();
    dim->set_size(d);
    dim->set_name(tag + "_" + std::to_string(d));
  }
  t->set_tensor_content(content);
  auto* md = v->mutable_metadata();
  auto* p1 = md->add_plugin_data();
  p1->set_plugin_name("mode_step");
  p1->set_content(std::to_string(mode_step));
  auto* p2 = md->add_plugin_data();
  p2->set_plugin_name("mode");
  p2->set_content(mode);
  return ev;
}

TEST(TrialWriterProto, BytesIdenticalToGeneratedSerializerAndIndexPointsAtRecords) {
  TempDir dir;
  TrialWriterOptions opt;
  opt.wall_time = 1700000000.25;
  TrialWriter w(dir.path.string(), opt);
  struct Case {
    std::string name;
    DType dtype;
    std::vector<int64_t> shape;
    std::string bytes;
  };
  std::vector<Case> cases;
  std::string big(4 * 300 * 200, '\0');
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>(i * 7);
  cases.push_back({"big/2d", DType::Float32, {300, 200}, big});  // multi-byte varints
  cases.push_back({"scalar", DType::Float64, {}, std::string("\0\0\0\0\0\0\xf0\x3f", 8)});
  cases.push_back({"empty", DType::Int32, {3, 0}, ""});
  cases.push_back({"half", DType::Float16, {2}, std::string("\x00\x3c\x00\xc0", 4)});
  cases.push_back({"flags", DType::Bool, {3}, std::string("\x01\x00\x01", 3)});
  cases.push_back({"u64", DType::UInt64, {1}, std::string(8, '\xff')});
  for (int64_t step : {0, 1, 300}) {
    auto s = w.begin_step(step, "worker_0", TrialMode::kEval, step + 2);
    for (const auto& c : cases) s->add_tensor(c.name, c.dtype, c.shape, c.bytes.data(), c.bytes.size());
    s->close();
    std::string file = read_file(dir.path / event_file_name(step, "worker_0"));
    auto idx = nlohmann::json::parse(read_file(dir.path / index_file_name(step, "worker_0")));
    EXPECT_EQ(idx["meta"]["mode"], "EVAL");
    EXPECT_EQ(idx["meta"]["mode_step"], step + 2);
    EXPECT_EQ(idx["meta"]["event_file_name"], event_file_name(step, "worker_0"));
    ASSERT_EQ(idx["tensor_payload"].size(), cases.size());
    uint64_t expect_off = 0;
    for (size_t i = 0; i < cases.size(); ++i) {
      const auto& e = idx["tensor_payload"][i];
      EXPECT_EQ(e["tensorname"], cases[i].name);
      uint64_t start = e["start_idx"], length = e["length"];
      EXPECT_EQ(start, expect_off);
      expect_off += length;
      auto recs = split_records(file.substr(start, length));
      ASSERT_EQ(recs.size(), 1u) << cases[i].name;
      pb::Event parsed;
      ASSERT_TRUE(parsed.ParseFromString(recs[0].data)) << cases[i].name;
      EXPECT_EQ(parsed.summary().value(0).tag(), cases[i].name);
      EXPECT_EQ(parsed.summary().value(0).tensor().tensor_content(), cases[i].bytes);
      std::string ref = reference_event(opt.wall_time, step, cases[i].name, tf_dtype_number(cases[i].dtype),
                                        cases[i].shape, cases[i].bytes, "2", step + 2)
                            .SerializeAsString();
      EXPECT_EQ(recs[0].data, ref) << "serialization differs for " << cases[i].name << " at step " << step;
    }
    EXPECT_EQ(expect_off, file.size());
  }
}

TEST(TrialWriterProto, StringsReductionsShapesAndRawEvents) {
  TempDir dir;
  TrialWriter w(dir.path.string(), {});
  {
    auto s = w.begin_step(2, "worker_0", TrialMode::kPredict, 0);
    s->add_strings("tokens", {"a", "\xC3\xA9t\xC3\xA9", ""}, {3});
    s->add_reduction("dense/kernel:0", "l2", true, 0.5);
    s->add_reduction("x", "mean", false, 0.1, DType::Float64);
    s->add_shape("grad/x", {100});
    pb::Event typed;
    typed.set_step(2);
    auto* v = typed.mutable_summary()->add_value();
    v->set_tag("typed");
    v->mutable_tensor()->set_dtype(1);
    v->mutable_tensor()->add_float_val(2.5f);
    s->add_event(typed, "typed");
    s->close();
  }
  std::string file = read_file(dir.path / event_file_name(2, "worker_0"));
  auto idx = nlohmann::json::parse(read_file(dir.path / index_file_name(2, "worker_0")));
  ASSERT_EQ(idx["tensor_payload"].size(), 4u);
  EXPECT_EQ(idx["tensor_payload"][1]["tensorname"], "smdebug/reductions/abs_l2/dense/kernel");
  EXPECT_EQ(idx["tensor_payload"][2]["tensorname"], "smdebug/reductions/mean/x");
  EXPECT_EQ(idx["shape_payload"][0]["tensorname"], "grad/x");
  EXPECT_EQ(idx["shape_payload"][0]["originalname"], "grad/x");
  EXPECT_EQ(idx["shape_payload"][0]["shape"], nlohmann::json::array({100}));
  std::vector<pb::Event> evs;
  for (const auto& e : idx["tensor_payload"]) {
    auto recs = split_records(file.substr(e["start_idx"].get<uint64_t>(), e["length"].get<uint64_t>()));
    ASSERT_EQ(recs.size(), 1u);
    evs.emplace_back();
    ASSERT_TRUE(evs.back().ParseFromString(recs[0].data));
  }
  const auto& strs = evs[0].summary().value(0).tensor();
  EXPECT_EQ(strs.dtype(), 0);
  ASSERT_EQ(strs.string_val_size(), 3);
  EXPECT_EQ(strs.string_val(1), "\xC3\xA9t\xC3\xA9");
  EXPECT_EQ(evs[0].summary().value(0).metadata().plugin_data(1).content(), "3");  // PREDICT
  const auto& red = evs[1].summary().value(0).tensor();
  EXPECT_EQ(red.dtype(), 1);
  EXPECT_EQ(red.tensor_shape().dim_size(), 0);
  float f;
  std::memcpy(&f, red.tensor_content().data(), 4);
  EXPECT_EQ(f, 0.5f);
  double d;
  std::memcpy(&d, evs[2].summary().value(0).tensor().tensor_content().data(), 8);
  EXPECT_EQ(d, 0.1);
  EXPECT_EQ(evs[3].summary().value(0).tensor().float_val(0), 2.5f);
}

TEST(TrialWriterIndex, ShapeOnlyStepHasNoEventFileName) {
  TempDir dir;
  TrialWriter w(dir.path.string(), {});
  auto s = w.begin_step(4, "worker_0", TrialMode::kTrain, 2);
  s->add_shape("w", {2, 3}, "orig/w");
  s->close();
  EXPECT_FALSE(fs::exists(dir.path / event_file_name(4, "worker_0")));
  EXPECT_EQ(read_file(dir.path / index_file_name(4, "worker_0")),
            "{\"meta\": {\"mode\": \"TRAIN\", \"mode_step\": 2}, \"tensor_payload\": [], \"shape_payload\": "
            "[{\"tensorname\": \"w\", \"originalname\": \"orig/w\", \"shape\": [2, 3]}]}");
}

TEST(TrialWriterErrors, BadArgumentsAndClosedSteps) {
  TempDir dir;
  TrialWriter w(dir.path.string(), {});
  auto s = w.begin_step(0, "worker_0", TrialMode::kTrain, 0);
  float x[3] = {};
  EXPECT_THROW(s->add_tensor("x", DType::Float32, {4}, x, 12), Error);
  EXPECT_THROW(s->add_strings("s", {"a"}, {2}), Error);
  EXPECT_THROW(w.begin_step(-1, "worker_0", TrialMode::kTrain, 0), Error);
  s->add_tensor("x", DType::Float32, {3}, x, 12);
  s->close();
  EXPECT_THROW(s->add_tensor("y", DType::Float32, {3}, x, 12), Error);
  // Nothing is left behind as .tmp; an empty step writes no files.
  auto empty = w.begin_step(1, "worker_0", TrialMode::kTrain, 1);
  empty->close();
  EXPECT_FALSE(fs::exists(dir.path / index_file_name(1, "worker_0")));
  for (const auto& e : fs::recursive_directory_iterator(dir.path)) EXPECT_NE(e.path().extension(), ".tmp") << e.path();
}

TEST(TrialWriterStaged, IndexBeforeEventAndEventInTwoHalves) {
  TempDir staged_dir, stream_dir;
  TrialWriterOptions opt;
  opt.wall_time = 99.0;
  std::vector<float> v(1000);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i) * 0.5f;
  {
    TrialWriter w(stream_dir.path.string(), opt);
    auto s = w.begin_step(12, "worker_1", TrialMode::kTrain, 12);
    s->add_tensor("a", DType::Float32, {1000}, v.data(), 4000);
    s->add_tensor("b", DType::Float32, {10, 100}, v.data(), 4000);
    // Streaming: the event file appears only when the step is closed (as smdebug's .tmp rename).
    EXPECT_FALSE(fs::exists(stream_dir.path / event_file_name(12, "worker_1")));
    s->close();
  }
  TrialWriter w(staged_dir.path.string(), opt);
  auto s = w.begin_step(12, "worker_1", TrialMode::kTrain, 12, /*staged=*/true);
  s->add_tensor("a", DType::Float32, {1000}, v.data(), 4000);
  s->add_tensor("b", DType::Float32, {10, 100}, v.data(), 4000);
  fs::path ev = staged_dir.path / event_file_name(12, "worker_1");
  fs::path ix = staged_dir.path / index_file_name(12, "worker_1");
  EXPECT_FALSE(fs::exists(ev));
  s->write_index_file();
  EXPECT_TRUE(fs::exists(ix));
  EXPECT_FALSE(fs::exists(ev));
  uint64_t half = s->event_bytes() / 2;
  ASSERT_GT(half, s->index_entries()[0].length);  // the cut falls inside the second record
  s->write_event_prefix(half);
  EXPECT_EQ(fs::file_size(ev), half);
  s->close();
  EXPECT_EQ(fs::file_size(ev), s->event_bytes());
  EXPECT_EQ(read_file(ev), read_file(stream_dir.path / event_file_name(12, "worker_1")));
  EXPECT_EQ(read_file(ix), read_file(stream_dir.path / index_file_name(12, "worker_1")));
}

TEST(TrialWriterFileVersion, OptionalFirstRecordIsNotIndexed) {
  TempDir dir;
  TrialWriterOptions opt;
  opt.file_version_record = true;
  TrialWriter w(dir.path.string(), opt);
  float x = 1;
  auto s = w.begin_step(0, "worker_0", TrialMode::kGlobal, 0);
  s->add_tensor("x", DType::Float32, {}, &x, 4);
  s->close();
  auto recs = split_records(read_file(dir.path / event_file_name(0, "worker_0")));
  ASSERT_EQ(recs.size(), 2u);
  pb::Event first;
  ASSERT_TRUE(first.ParseFromString(recs[0].data));
  EXPECT_EQ(first.file_version(), "brain.Event:2");
  EXPECT_FALSE(first.has_summary());
  ASSERT_EQ(s->index_entries().size(), 1u);
  EXPECT_EQ(s->index_entries()[0].start_idx, recs[1].offset);
}

// Rewrites one step of a real smdebug trial from its decoded events and checks that the event
// and index files come out byte for byte identical.
void reproduce_step(const std::string& trial, int64_t step, const std::string& worker) {
  std::string ev_rel = event_file_name(step, worker), ix_rel = index_file_name(step, worker);
  std::string orig_ev = read_file(fixture(trial) / ev_rel);
  auto orig_ix = nlohmann::json::parse(read_file(fixture(trial) / ix_rel));
  TempDir dir;
  TrialWriter w(dir.path.string(), {});
  TrialMode mode = TrialMode::kGlobal;
  for (TrialMode m : {TrialMode::kTrain, TrialMode::kEval, TrialMode::kPredict, TrialMode::kGlobal})
    if (orig_ix["meta"]["mode"] == trial_mode_name(m)) mode = m;
  auto s = w.begin_step(step, worker, mode, orig_ix["meta"]["mode_step"].get<int64_t>());
  for (const auto& rec : split_records(orig_ev)) {
    pb::Event ev;
    ASSERT_TRUE(ev.ParseFromString(rec.data));
    const auto& v = ev.summary().value(0);
    const auto& t = v.tensor();
    std::vector<int64_t> shape;
    for (const auto& d : t.tensor_shape().dim()) shape.push_back(d.size());
    DType dt = DType::Float32;
    for (int k = 0; k < kDTypeCount; ++k)
      if (tf_dtype_number(static_cast<DType>(k)) == t.dtype()) dt = static_cast<DType>(k);
    w.set_wall_time(ev.wall_time());
    s->add_tensor(v.tag(), dt, shape, t.tensor_content().data(), t.tensor_content().size());
  }
  for (const auto& sp : orig_ix["shape_payload"])
    s->add_shape(sp["tensorname"].get<std::string>(), sp["shape"].get<std::vector<int64_t>>(),
                 sp["originalname"].get<std::string>());
  s->close();
  EXPECT_EQ(read_file(dir.path / ev_rel), orig_ev) << trial << " " << ev_rel;
  EXPECT_EQ(read_file(dir.path / ix_rel), read_file(fixture(trial) / ix_rel)) << trial << " " << ix_rel;
}

TEST(TrialWriterFixtures, ReproducesRealHookEventAndIndexFiles) {
  reproduce_step("pt_bad_init", 3, "worker_0");
  reproduce_step("pt_bad_init", 8, "worker_0");    // EVAL
  reproduce_step("pt_reductions", 0, "worker_0");  // reductions only + shape payload
  reproduce_step("dist2", 4, "worker_1");
}

TEST(TrialWriterFixtures, ReproducesRealCollectionsFile) {
  std::string path = "pt_reductions/collections/000000000/worker_0_collections.json";
  auto orig = nlohmann::json::parse(read_file(fixture(path)));
  std::vector<CollectionSpec> specs;
  auto save = [](const nlohmann::json& j) {
    SaveConfig c;
    if (j.is_null()) return c;
    c.save_interval = j["save_interval"];
    c.start_step = j["start_step"];
    c.end_step = j["end_step"].is_null() ? -1 : j["end_step"].get<int64_t>();
    return c;
  };
  bool has_null_mode = false;
  for (const auto& [name, c] : orig["collections"].items()) {
    CollectionSpec s;
    s.name = c["name"];
    s.include_regex = c["include_regex"].get<std::vector<std::string>>();
    s.tensor_names = c["tensor_names"].get<std::vector<std::string>>();
    s.save_raw_tensor = c["reduction_config"]["save_raw_tensor"];
    s.reductions = c["reduction_config"]["reductions"];
    s.save_shape = c["reduction_config"]["save_shape"];
    s.train = save(c["save_config"]["TRAIN"]);
    s.eval = save(c["save_config"]["EVAL"]);
    s.predict = save(c["save_config"]["PREDICT"]);
    s.global = save(c["save_config"]["GLOBAL"]);
    has_null_mode |= c["save_config"]["PREDICT"].is_null();
    s.save_histogram = c["save_histogram"];
    specs.push_back(s);
  }
  ASSERT_FALSE(specs.empty());
  std::string ours = collections_json(specs, orig["_meta"]["num_workers"]);
  auto parsed = nlohmann::json::parse(ours);
  EXPECT_EQ(parsed["_meta"]["num_workers"], 1);
  EXPECT_EQ(parsed["collections"].size(), orig["collections"].size());
  // pt_reductions has null PREDICT/GLOBAL save configs, which we always write out; compare the
  // byte layout on pt_bad_init, where the hook wrote all four.
  if (has_null_mode) {
    for (auto& [name, c] : parsed["collections"].items()) {
      EXPECT_EQ(c["include_regex"], orig["collections"][name]["include_regex"]);
      EXPECT_EQ(c["tensor_names"], orig["collections"][name]["tensor_names"]);
      EXPECT_EQ(c["reduction_config"], orig["collections"][name]["reduction_config"]);
    }
  }
  std::string bad = read_file(fixture("pt_bad_init/collections/000000000/worker_0_collections.json"));
  auto bj = nlohmann::json::parse(bad);
  std::vector<CollectionSpec> bspecs;
  for (const auto& [name, c] : bj["collections"].items()) {
    CollectionSpec s;
    s.name = c["name"];
    s.include_regex = c["include_regex"].get<std::vector<std::string>>();
    s.tensor_names = c["tensor_names"].get<std::vector<std::string>>();
    s.reductions = c["reduction_config"]["reductions"];
    s.save_histogram = c["save_histogram"];
    bspecs.push_back(s);
  }
  // nlohmann sorts keys; restore the file's collection order from the text.
  std::sort(bspecs.begin(), bspecs.end(), [&](const CollectionSpec& a, const CollectionSpec& b) {
    return bad.find("\"" + a.name + "\": {\"name\"") < bad.find("\"" + b.name + "\": {\"name\"");
  });
  EXPECT_EQ(collections_json(bspecs, 1), bad);
}

}  // namespace
}  // namespace trialdb
