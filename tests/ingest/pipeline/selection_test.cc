// Selective ingest (--steps, --tensors, --collections), values stored without their bytes
// (--values none, then --values all) and value_locations, on the bundled fixtures: each is
// compared with a full ingest of the same trial, row for row.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "ingest/pipeline/catalog.h"
#include "ingest/pipeline/ingester.h"
#include "ingest/pipeline/record_decoder.h"
#include "ingest/source/local_source.h"
#include "ingest/source/mapped_range.h"
#include "schema/database.h"
#include "schema/py_regex.h"
#include "schema/value_blob.h"
#include "tests/common/file_bytes.h"
#include "tests/common/temp_dir.h"

using namespace trialdb;
using trialdb::test::TempDir;
namespace fs = std::filesystem;

static const bool kSigbusHandlerInstalled = (MappedRange::install_sigbus_handler(), true);

namespace {

const fs::path kFixtures = TRIALDB_FIXTURES;
const std::vector<std::string> kAllFixtures = {"core_dtypes", "dist2", "pt_bad_init", "pt_reductions", "zoo"};

IngestStats ingest(Database& db, const std::string& fixture, const IngestOptions& options = {}) {
  LocalSource src((kFixtures / fixture).string());
  IngestOptions o = options;
  o.name = fixture;
  Ingester ing(db, src, o);
  return ing.run_once();
}

IngestOptions selecting(const SelectionSpec& spec) {
  IngestOptions o;
  o.selection = spec;
  return o;
}

IngestOptions values_none() {
  IngestOptions o;
  o.store_values = false;
  return o;
}

IngestOptions values_all() {
  IngestOptions o;
  o.add_missing_values = true;
  return o;
}

int64_t scalar(Database& db, const std::string& sql) {
  Statement q(db.handle(), sql);
  EXPECT_TRUE(q.step()) << sql;
  return q.int64(0);
}

// The rows of the value views, one string per row (values as hex, reals exactly), keyed by
// (tensor, step) so a test can keep the selected ones.
struct Row {
  std::string tensor;
  int64_t global_step;
  std::string text;
  bool operator<(const Row& o) const { return text < o.text; }
  bool operator==(const Row& o) const { return text == o.text; }
};

std::vector<Row> value_rows(Database& db) {
  std::vector<Row> rows;
  const std::vector<std::string> queries = {
      "SELECT tensor, global_step, 'value', step, worker, mode, mode_step, dtype, shape, hex(value) FROM tensor_values",
      "SELECT tensor, global_step, 'reduction', step, worker, reduction, abs, printf('%.17g', value) FROM reductions",
      "SELECT d.tensor, v.global_step, 'distribution', d.* FROM distributions d JOIN tensor_values v "
      "USING (trial, tensor, step, worker)",
      "SELECT l.tensor, v.global_step, 'location', l.* FROM value_locations l JOIN tensor_values v "
      "USING (trial, tensor, step, worker)"};
  for (const auto& sql : queries) {
    Statement q(db.handle(), sql);
    while (q.step()) {
      Row r{q.text(0), q.int64(1), ""};
      for (int c = 2; c < sqlite3_column_count(q.handle()); ++c) r.text += (q.is_null(c) ? "NULL" : q.text(c)) + "|";
      r.text = r.tensor + "|" + std::to_string(r.global_step) + "|" + r.text;
      rows.push_back(std::move(r));
    }
  }
  std::sort(rows.begin(), rows.end());
  return rows;
}

// The rows of a full ingest that a selection keeps: steps by range, tensors by regex or by the
// collections view.
std::vector<Row> selected(Database& full, const std::vector<Row>& rows, const SelectionSpec& spec) {
  std::unique_ptr<PyRegex> re;
  if (!spec.tensor_regex.empty()) {
    EXPECT_TRUE(PyRegex::compile(spec.tensor_regex, &re).is_ok());
  }
  std::set<std::string> members;
  for (const auto& c : spec.collections) {
    Statement q(full.handle(), "SELECT tensor FROM collections WHERE collection = ?");
    q.bind(1, c);
    while (q.step()) members.insert(q.text(0));
  }
  std::vector<Row> kept;
  for (const auto& r : rows) {
    if (spec.first_step && r.global_step < *spec.first_step) continue;
    if (spec.end_step && r.global_step >= *spec.end_step) continue;
    if (!spec.selects_all_tensors() && !(re && re->search(r.tensor)) && !members.count(r.tensor)) continue;
    kept.push_back(r);
  }
  return kept;
}

}  // namespace

TEST(SelectiveIngest, StoresExactlyTheSelectedRowsOfAFullIngest) {
  SelectionSpec by_steps, by_tensors, by_collection, combined;
  by_steps.first_step = 2;
  by_steps.end_step = 7;
  by_tensors.tensor_regex = "weight|^CrossEntropy";
  by_collection.collections = {"losses"};
  combined = by_steps;
  combined.tensor_regex = "bias";
  combined.collections = {"losses"};
  for (const std::string& fixture : kAllFixtures) {
    TempDir tmp;
    Database full((tmp.path / "full.db").string());
    ingest(full, fixture);
    const std::vector<Row> all = value_rows(full);
    int i = 0;
    for (const SelectionSpec* spec : {&by_steps, &by_tensors, &by_collection, &combined}) {
      SCOPED_TRACE(fixture + " selection " + std::to_string(i));
      Database db((tmp.path / ("s" + std::to_string(i++) + ".db")).string());
      IngestOptions o;
      o.selection = *spec;
      ingest(db, fixture, o);
      const std::vector<Row> want = selected(full, all, *spec);
      EXPECT_FALSE(want.empty());
      EXPECT_TRUE(value_rows(db) == want);
    }
  }
}

TEST(SelectiveIngest, AWiderRunIngestsExactlyTheMissingRowsAndNoSelectionEverything) {
  for (const std::string& fixture : kAllFixtures) {
    SCOPED_TRACE(fixture);
    TempDir tmp;
    Database full((tmp.path / "full.db").string());
    const IngestStats whole = ingest(full, fixture);
    const std::vector<Row> all = value_rows(full);
    Database db((tmp.path / "t.db").string());
    SelectionSpec narrow, wide;
    narrow.tensor_regex = "weight";
    narrow.first_step = 1;
    narrow.end_step = 4;
    wide.tensor_regex = "weight|bias";
    const IngestStats first = ingest(db, fixture, selecting(narrow));
    EXPECT_TRUE(value_rows(db) == selected(full, all, narrow));
    // The same selection again reads nothing: every file it left out was read under it.
    const IngestStats again = ingest(db, fixture, selecting(narrow));
    EXPECT_EQ(again.bytes_read, 0u);
    EXPECT_EQ(again.values, 0u);
    const IngestStats second = ingest(db, fixture, selecting(wide));
    EXPECT_TRUE(value_rows(db) == selected(full, all, wide));
    const int64_t wide_values = scalar(db, "SELECT count(*) FROM tensor_values");
    EXPECT_EQ(first.values + second.values, static_cast<size_t>(wide_values));
    // Nothing is left out any more: every file is ingested, none partial, as after a full ingest.
    const IngestStats rest = ingest(db, fixture);
    EXPECT_EQ(first.values + second.values + rest.values, whole.values);
    EXPECT_TRUE(value_rows(db) == all);
    EXPECT_EQ(scalar(db, "SELECT count(*) FROM partial_file"), 0);
    EXPECT_EQ(scalar(db, "SELECT count(*) FROM ingested_file"), scalar(full, "SELECT count(*) FROM ingested_file"));
    EXPECT_EQ(scalar(db, "SELECT count(*) FROM steps"), scalar(full, "SELECT count(*) FROM steps"));
    EXPECT_EQ(ingest(db, fixture).values, 0u);
  }
}

TEST(SelectiveIngest, AnUnknownCollectionIsAnErrorNamingTheCollections) {
  TempDir tmp;
  Database db((tmp.path / "t.db").string());
  SelectionSpec spec;
  spec.collections = {"nope"};
  try {
    ingest(db, "dist2", selecting(spec));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUsage);
    EXPECT_NE(std::string(e.what()).find("no collection 'nope' (collections: "), std::string::npos) << e.what();
  }
}

TEST(SelectiveIngest, StepRangesParseAsPythonRanges) {
  SelectionSpec s;
  EXPECT_TRUE(parse_step_range("3:10", &s).is_ok());
  EXPECT_EQ(*s.first_step, 3);
  EXPECT_EQ(*s.end_step, 10);
  SelectionSpec open;
  EXPECT_TRUE(parse_step_range(":5", &open).is_ok());
  EXPECT_FALSE(open.first_step.has_value());
  for (const char* bad : {"5", "5:5", "7:3", ":", "a:b", "-1:3", "1:2:3"}) {
    SelectionSpec x;
    EXPECT_EQ(parse_step_range(bad, &x).kind(), ErrorKind::kUsage) << bad;
  }
}

TEST(ValuesNone, KeepsEverythingButTheBytesAndValuesAllAddsExactlyThem) {
  for (const std::string& fixture : kAllFixtures) {
    SCOPED_TRACE(fixture);
    TempDir tmp;
    Database full((tmp.path / "full.db").string());
    ingest(full, fixture);
    Database db((tmp.path / "t.db").string());
    ingest(db, fixture, values_none());
    // Every value row is there; one with bytes in the full ingest holds only its header, one
    // without bytes (the hook saved reductions or a shape only) is NULL as in the full ingest.
    db.exec("ATTACH '" + (tmp.path / "full.db").string() + "' AS full");
    int64_t headers = 0;
    for (Statement q(db.handle(),
                     "SELECT a.value, b.value FROM tensor_values a "
                     "JOIN full.tensor_values b USING (trial, tensor, step, worker)");
         q.step();) {
      const bool had_bytes = !q.is_null(1);
      EXPECT_EQ(!q.is_null(0), had_bytes);
      if (!had_bytes) continue;
      const std::string blob = q.text(0);
      ASSERT_TRUE(blob_bytes_not_stored(blob));
      TensorView view;
      std::vector<uint8_t> scratch;
      EXPECT_EQ(decode_blob(blob.data(), blob.size(), &view, &scratch).cause(), kBytesNotStoredMessage);
      ++headers;
    }
    db.exec("DETACH full");
    EXPECT_EQ(headers, scalar(full, "SELECT count(*) FROM tensor_values WHERE value IS NOT NULL"));
    EXPECT_EQ(scalar(db, "SELECT count(*) FROM tensor_values"), scalar(full, "SELECT count(*) FROM tensor_values"));
    // Reductions, distributions and locations are those of the full ingest.
    std::vector<Row> none_rows = value_rows(db), full_rows = value_rows(full);
    std::erase_if(none_rows, [](const Row& r) { return r.text.find("|value|") != std::string::npos; });
    std::erase_if(full_rows, [](const Row& r) { return r.text.find("|value|") != std::string::npos; });
    EXPECT_TRUE(none_rows == full_rows);

    // --values all: exactly the missing records are read, and the database equals a full ingest.
    const IngestStats added = ingest(db, fixture, values_all());
    EXPECT_EQ(added.values_added, static_cast<size_t>(headers));
    EXPECT_EQ(added.files_ingested, 0u);
    EXPECT_EQ(static_cast<int64_t>(added.bytes_read), scalar(full,
                                                             "SELECT coalesce(sum(length), 0) FROM value_locations l "
                                                             "JOIN tensor_values v USING (trial, tensor, step, worker) "
                                                             "WHERE v.value IS NOT NULL"));
    EXPECT_TRUE(value_rows(db) == value_rows(full));
    EXPECT_EQ(ingest(db, fixture, values_all()).values_added, 0u);
  }
}

TEST(ValueLocations, PointAtRecordsThatDecodeToTheStoredValues) {
  for (const std::string& fixture : kAllFixtures) {
    SCOPED_TRACE(fixture);
    TempDir tmp;
    Database db((tmp.path / "t.db").string());
    ingest(db, fixture);
    Statement q(db.handle(),
                "SELECT l.tensor, v.global_step, l.file, l.\"offset\", l.length, v.value FROM value_locations l "
                "JOIN tensor_values v USING (trial, tensor, step, worker)");
    int64_t checked = 0;
    while (q.step()) {
      const std::string tensor = q.text(0), file = q.text(2);
      const uint64_t offset = static_cast<uint64_t>(q.int64(3)), length = static_cast<uint64_t>(q.int64(4));
      ASSERT_EQ(file.rfind((kFixtures / fixture).string() + "/events/", 0), 0u) << file;
      std::string record = trialdb::test::file_bytes(file).substr(offset, length);
      ASSERT_EQ(record.size(), length);
      DecodedRecord d = decode_record(IndexEntry{tensor, offset, length}, q.int64(1), record, offset, file, UINT64_MAX);
      ASSERT_TRUE(d.error.empty()) << d.error;
      encode_record(d, false, record.data(), 0, false);
      ASSERT_FALSE(q.is_null(5)) << tensor;
      EXPECT_EQ(std::string(d.blob.bytes()), q.text(5)) << tensor << " step " << q.int64(1);
      ++checked;
    }
    EXPECT_EQ(checked, scalar(db, "SELECT count(*) FROM tensor_values WHERE value IS NOT NULL"));
  }
}
