// The value writer's buffer (value_writer.h): value rows inserted in key order, later than their
// files are written; value_distribution rows appended in the order of the ids their values name. Whatever its size,
// flushed many times in a transaction or once, the database is the same; errors still name their file, and a failure
// leaves nothing behind.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "ingest/pipeline/catalog.h"
#include "ingest/pipeline/ingester.h"
#include "ingest/pipeline/prepared_file.h"
#include "ingest/pipeline/tensor_summary_writer.h"
#include "ingest/pipeline/value_writer.h"
#include "ingest/source/local_source.h"
#include "ingest/writer/trial_writer.h"
#include "schema/database.h"
#include "tests/common/rows_text.h"
#include "tests/common/temp_dir.h"

using namespace trialdb;
using trialdb::test::rows_text;
using trialdb::test::TempDir;
namespace fs = std::filesystem;

namespace {

constexpr int kScalars = 40;  // plain scalars: the scalar statement, more than one batch
// A flush after every few rows, and one after every row (the bytes' limit).
constexpr ValueBufferLimits kFewRows{3, kValueBufferBytes};
constexpr ValueBufferLimits kFewBytes{kValueBufferRows, 1};

int64_t scalar(Database& db, const std::string& sql) {
  Statement q(db.handle(), sql);
  EXPECT_TRUE(q.step()) << sql;
  return q.int64(0);
}

// Every public view the values reach, and the tables they are kept in, as one string.
std::string dump(Database& db) {
  return rows_text(
      db.handle(),
      {"SELECT trial, workers, ended FROM trials ORDER BY 1", "SELECT * FROM steps ORDER BY 1, 2",
       "SELECT * FROM tensors ORDER BY 1, 2",
       "SELECT trial, tensor, step, worker, mode, mode_step, dtype, shape, hex(value) FROM "
       "tensor_values ORDER BY 1, 2, 3, 4",
       "SELECT trial, tensor, step, worker, reduction, abs, printf('%.17g', value) FROM reductions "
       "ORDER BY 1, 2, 3, 4, 5, 6",
       "SELECT * FROM distributions ORDER BY 1, 2, 3, 4",  // by value: distribution ids follow the order files came in
       "SELECT tn.name, v.tensor_step, v.worker_id, hex(h.buckets) FROM value v JOIN tensor tn USING (tensor_id) "
       "JOIN value_distribution d USING (distribution_id) LEFT JOIN value_histogram h USING (distribution_id) "
       "ORDER BY 1, 2, 3",
       "SELECT count(*) FROM value_distribution WHERE distribution_id NOT IN "
       "(SELECT distribution_id FROM value WHERE distribution_id IS NOT NULL)",
       "SELECT tensor, step, worker, replace(file, (SELECT path FROM trials), ''), \"offset\", length, dtype, "
       "shape, global_step FROM value_locations ORDER BY 1, 2, 3, 4",
       "SELECT * FROM tensor_variant ORDER BY 1, 2, 3, 4, 5", "SELECT name, visible_steps FROM tensor ORDER BY 1",
       "SELECT file, step, message FROM ingest_error ORDER BY 1, 2, 3", "SELECT count(*) FROM ingested_file",
       "SELECT count(*) FROM value_blob", "SELECT count(*) FROM value_histogram"});
}

// Steps [from, to) of `workers`: plain scalars, a small tensor (inline, with a distribution and
// a histogram) and a large one (in value_blob).
// GLOBAL-mode steps are numbered by their mode step (0 at `from`): their rows sort among the
// earlier steps'.
void write_steps(const fs::path& trial, int from, int to, const std::vector<std::string>& workers,
                 TrialMode mode = TrialMode::kTrain) {
  TrialWriter w(trial.string());
  for (int step = from; step < to; ++step)
    for (size_t k = 0; k < workers.size(); ++k) {
      auto s = w.begin_step(step, workers[k], mode, mode == TrialMode::kGlobal ? step - from : step);
      for (int t = 0; t < kScalars; ++t) {
        const float x = static_cast<float>(step * 100 + t) + 0.5f * static_cast<float>(workers[k].back() - '0');
        s->add_tensor("loss_" + std::to_string(t), DType::Float32, {}, &x, 4);
      }
      float small[6];
      for (int i = 0; i < 6; ++i) small[i] = static_cast<float>(i - step) * 0.25f;
      s->add_tensor("bias", DType::Float32, {2, 3}, small, sizeof small);
      std::vector<float> big(1024);
      for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<float>(step) - static_cast<float>(i % 17);
      s->add_tensor("weight", DType::Float32, {32, 32}, big.data(), big.size() * 4);
      s->close();
    }
}

// a == b, or the first line where they differ (gtest's diff of whole dumps takes gigabytes).
::testing::AssertionResult same_dump(const std::string& a, const std::string& b) {
  if (a == b) return ::testing::AssertionSuccess();
  size_t at = 0;
  while (at < a.size() && at < b.size() && a[at] == b[at]) ++at;
  const size_t line = a.rfind('\n', at) == std::string::npos ? 0 : a.rfind('\n', at) + 1;
  return ::testing::AssertionFailure() << "first difference:\n"
                                       << a.substr(line, a.find('\n', at) - line) << "\n"
                                       << b.substr(line, b.find('\n', at) - line);
}

IngestOptions named_t() {
  IngestOptions o;
  o.name = "t";
  return o;
}

IngestStats run(Database& db, const fs::path& trial, ValueBufferLimits limits = {}) {
  LocalSource src(trial.string());
  return Ingester(db, src, named_t(), limits).run_once();
}

}  // namespace

// Many flushes within a transaction, several transactions in a pass (more than 256 files), and a
// second pass of the same ingester (as --follow makes) that adds a worker's late file of a step
// already visible (its summary looks up the other worker's values) and new steps: the database
// equals a fresh ingest's of the whole trial with the production buffer.
TEST(ValueBuffer, ATinyBufferStoresWhatOneFlushStores) {
  TempDir tmp;
  const fs::path trial = tmp.path / "trial";
  write_steps(trial, 0, 140, {"worker_0", "worker_1"});
  write_steps(trial, 140, 141, {"worker_0"});  // worker_1's lands in the second pass
  write_steps(trial, 141, 150, {"worker_0", "worker_1"});
  for (ValueBufferLimits limits : {kFewRows, kFewBytes}) {
    SCOPED_TRACE(limits.rows);
    const fs::path copy = tmp.path / ("copy_" + std::to_string(limits.rows));
    fs::copy(trial, copy, fs::copy_options::recursive);
    Database db((tmp.path / ("tiny_" + std::to_string(limits.rows) + ".db")).string());
    LocalSource src(copy.string());
    Ingester ing(db, src, named_t(), limits);
    IngestStats first = ing.run_once();
    EXPECT_TRUE(first.errors.empty());
    EXPECT_EQ(scalar(db, "SELECT complete FROM steps WHERE step = 140"), 1);  // later steps are complete
    write_steps(copy, 140, 141, {"worker_1"});
    write_steps(copy, 150, 153, {"worker_0", "worker_1"});
    TrialWriter(copy.string()).write_end_marker();
    IngestStats second = ing.run_once();
    EXPECT_TRUE(second.errors.empty());
    EXPECT_EQ(first.values + second.values, 153u * 2 * (kScalars + 2));

    const fs::path fresh = tmp.path / ("fresh_" + std::to_string(limits.rows));
    write_steps(fresh, 0, 153, {"worker_0", "worker_1"});
    TrialWriter(fresh.string()).write_end_marker();
    Database ref((tmp.path / ("ref_" + std::to_string(limits.rows) + ".db")).string());
    run(ref, fresh);
    EXPECT_TRUE(same_dump(dump(db), dump(ref)));
  }
}

// The rows of a pass that fits in one buffer go in in key order (a fresh trial's are appends), and
// the distribution and histogram rows in the order of their ids: watched by triggers of the test's
// own connection, which log each row's key as it is inserted.
TEST(ValueBuffer, RowsGoInInKeyOrder) {
  TempDir tmp;
  const fs::path trial = tmp.path / "trial";
  write_steps(trial, 0, 20, {"worker_0", "worker_1"});
  write_steps(trial, 20, 25, {"worker_0", "worker_1"}, TrialMode::kGlobal);
  Database db((tmp.path / "t.db").string());
  const std::pair<const char*, const char*> keys[] = {
      {"value", "new.tensor_id, new.tensor_step, new.step_offset, new.worker_id"},
      {"value_distribution", "new.distribution_id, 0, 0, 0"},
      {"value_histogram", "new.distribution_id, 0, 0, 0"}};
  for (const auto& [table, key] : keys) {
    const std::string t = table;
    Statement(db.handle(), "CREATE TEMP TABLE " + t + "_log(n INTEGER PRIMARY KEY, k1, k2, k3, k4)").run();
    Statement(db.handle(), "CREATE TEMP TRIGGER " + t + "_logged AFTER INSERT ON main." + t + " BEGIN INSERT INTO " +
                               t + "_log(k1, k2, k3, k4) VALUES (" + key + "); END")
        .run();
  }
  run(db, trial);
  EXPECT_EQ(scalar(db, "SELECT count(*) FROM value WHERE step_offset = 20"), 5 * 2 * (kScalars + 2));
  for (const auto& [table, key] : keys) {
    SCOPED_TRACE(table);
    const std::string log = std::string(table) + "_log";
    EXPECT_GT(scalar(db, "SELECT count(*) FROM " + log), 25 * 2);
    // Rows whose key is below the key of a row inserted before them.
    EXPECT_EQ(scalar(db, "SELECT count(*) FROM " + log + " a JOIN " + log +
                             " b ON b.n = a.n - 1 WHERE (a.k1, a.k2, a.k3, a.k4) < (b.k1, b.k2, b.k3, b.k4)"),
              0);
  }
}

namespace {

// A ValueWriter in a database of one trial, and files of values with saved reductions (no raw
// bytes: no event file needed).
struct Writer {
  explicit Writer(const fs::path& db_path, ValueBufferLimits limits)
      : db(db_path.string()),
        catalog(db, "t", "/nowhere"),
        summary(db, catalog.trial_id()),
        writer(db, catalog.trial_id(), false, summary, limits) {}

  PreparedFile file(int64_t step, const std::string& worker, const std::vector<std::string>& tensors) {
    PreparedFile f;
    f.file.path = "index/000000000/" + std::to_string(step) + "_" + worker + ".json";
    f.file.step = step;
    f.file.worker = worker;
    f.index_valid = true;
    f.mode = Mode::kTrain;
    f.mode_step = step;
    for (const std::string& t : tensors) {
      PreparedValue v;
      v.tensor = t;
      v.has_shape = true;
      v.shape_text = "[2]";
      v.red_src = ReductionSource::kColumns;
      v.red_mask = 1;
      v.red[kRedMin] = static_cast<double>(step) + 0.5;
      f.values.push_back(std::move(v));
    }
    return f;
  }

  // What the ingester does with a file: its values, then its step_worker row.
  size_t write(PreparedFile& f, std::vector<Status>* errors) {
    const int64_t worker_id = catalog.worker_id(f.file.worker);
    const size_t stored = writer.write(
        f, worker_id, f.file.step, [this](const std::string& name) { return catalog.tensor_id(name); },
        [&](const Status& e) { errors->push_back(e); });
    Statement(db.handle(), "INSERT OR IGNORE INTO step_worker(trial_id, step, worker_id) VALUES (?, ?, ?)")
        .bind(1, catalog.trial_id())
        .bind(2, f.file.step)
        .bind(3, worker_id)
        .run();
    return stored;
  }

  std::string values() {
    std::string out;
    Statement q(db.handle(),
                "SELECT tn.name, v.tensor_step, v.worker_id, v.r_min FROM value v JOIN tensor tn USING (tensor_id) "
                "ORDER BY 1, 2, 3");
    while (q.step()) out += q.text(0) + "@" + q.text(1) + "/" + q.text(2) + "=" + q.text(3) + " ";
    return out;
  }

  Database db;
  Catalog catalog;
  TensorSummaryWriter summary;
  ValueWriter writer;
};

}  // namespace

// A second file of a (step, worker) in the same transaction as the first (buffered) takes the
// row-by-row path: it sees the first file's values, reports the one stored again and stores the
// new one.
TEST(ValueBuffer, AValueBufferedEarlierInTheTransactionIsReportedByALaterFile) {
  TempDir tmp;
  Writer w(tmp.path / "t.db", {});
  std::vector<Status> errors;
  {
    Transaction tx(w.db);
    PreparedFile a = w.file(3, "worker_0", {"a", "b"});
    EXPECT_EQ(w.write(a, &errors), 2u);
    PreparedFile again = w.file(3, "worker_0", {"b", "c"});
    EXPECT_EQ(w.write(again, &errors), 1u);
    w.writer.flush();
    tx.commit();
  }
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].cause().find("tensor 'b' for worker worker_0 was already stored"), std::string::npos)
      << errors[0].to_string();
  EXPECT_EQ(errors[0].file(), "index/000000000/3_worker_0.json");
  EXPECT_EQ(w.values(), "a@3/1=3.5 b@3/1=3.5 c@3/1=3.5 ");
}

// The same with blobs stored apart: the value reported does not take a value_blob id, so the
// next one's blob is stored under the id its row names (not an ingest stopped by ids out of step).
TEST(ValueBuffer, AValueReportedAsStoredBeforeLeavesTheNextBlobItsId) {
  TempDir tmp;
  Writer w(tmp.path / "t.db", {});
  std::vector<Status> errors;
  auto with_blobs = [](PreparedFile f) {
    for (PreparedValue& v : f.values) {
      v.has_raw = true;
      v.blob.owned = v.tensor + std::string(ValueWriter::kInlineBlobBytes, '.');  // stored apart
    }
    return f;
  };
  {
    Transaction tx(w.db);
    PreparedFile a = with_blobs(w.file(3, "worker_0", {"a", "b"}));
    EXPECT_EQ(w.write(a, &errors), 2u);
    PreparedFile again = with_blobs(w.file(3, "worker_0", {"b", "c", "d"}));
    EXPECT_EQ(w.write(again, &errors), 2u);
    w.writer.flush();
    tx.commit();
  }
  ASSERT_EQ(errors.size(), 1u);
  Statement q(w.db.handle(),
              "SELECT tn.name, substr(b.data, 1, 1) FROM value v JOIN tensor tn USING (tensor_id) "
              "JOIN value_blob b USING (value_id) ORDER BY 1");
  std::string blobs;
  while (q.step()) blobs += q.text(0) + "=" + q.text(1) + " ";
  EXPECT_EQ(blobs, "a=a b=b c=c d=d ");
}

// A transaction rolled back drops what its buffer held: the next transaction stores only its own.
TEST(ValueBuffer, ARolledBackTransactionLeavesNothingInTheBuffer) {
  TempDir tmp;
  Writer w(tmp.path / "t.db", {});
  // The catalog's rows outlive the rollback, as they do in an ingest (created before its files).
  for (const char* t : {"a", "b"}) w.catalog.tensor_id(t);
  w.catalog.worker_id("worker_0");
  std::vector<Status> errors;
  {
    Transaction tx(w.db);
    PreparedFile a = w.file(1, "worker_0", {"a", "b"});
    w.write(a, &errors);
    w.writer.discard();  // as the ingester does when the transaction ends by an exception
  }
  {
    Transaction tx(w.db);
    PreparedFile b = w.file(2, "worker_0", {"a"});
    w.write(b, &errors);
    w.writer.flush();
    tx.commit();
  }
  EXPECT_TRUE(errors.empty());
  EXPECT_EQ(w.values(), "a@2/1=2.5 ");
}

// Values of a (step, worker) in the database without its step_worker row (the fast path relies on
// that row): the ingest stops with an error naming the file and its step, and whatever the pass
// had buffered and flushed before it is rolled back with it.
TEST(ValueBuffer, ACollisionNamesItsFileAndAFailedPassChangesNothing) {
  TempDir tmp;
  const fs::path trial = tmp.path / "trial";
  write_steps(trial, 0, 4, {"worker_0"});
  write_steps(trial, 9, 10, {"worker_0"});
  Database db((tmp.path / "t.db").string());
  run(db, trial);
  write_steps(trial, 4, 9, {"worker_0"});  // before step 9 in the next pass
  Statement(db.handle(), "DELETE FROM step_worker WHERE step = 9").run();
  Statement(db.handle(), "DELETE FROM ingested_file WHERE path LIKE '%000000000009_worker_0.json'").run();
  const std::string before = dump(db);
  try {
    run(db, trial, kFewRows);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(e.status().to_string().find("000000000009_worker_0.json"), std::string::npos) << e.status().to_string();
    EXPECT_NE(e.status().to_string().find("step 9"), std::string::npos) << e.status().to_string();
  }
  EXPECT_TRUE(same_dump(dump(db), before));
}

// After each row the writer inserts into `table`, a trigger of the test's connection inserts one
// behind its back (`columns` = `values`, the first of which no row of the writer's has): the next
// ingest of `trial` must stop with "<table> ids out of step" and change nothing.
void expect_ids_out_of_step_stop(Database& db, const fs::path& trial, const std::string& table,
                                 const std::string& id_column, const std::string& columns, const std::string& values) {
  const std::string marker = columns.substr(0, columns.find(',')), marked = values.substr(0, values.find(','));
  Statement(db.handle(), "CREATE TEMP TRIGGER one_more AFTER INSERT ON " + table + " WHEN NEW." + marker + " IS NOT " +
                             marked + " BEGIN INSERT INTO " + table + "(" + id_column + ", " + columns +
                             ") VALUES (NEW." + id_column + " + 1000, " + values + "); END")
      .run();
  const std::string before = dump(db);
  try {
    run(db, trial);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(e.status().to_string().find(table + " ids out of step"), std::string::npos) << e.status().to_string();
  }
  EXPECT_TRUE(same_dump(dump(db), before));
}

// value_distribution ids are SQLite's choice, checked against the ones the value rows name: ids
// out of step (a row inserted behind the writer's back, here by a trigger of the test's
// connection) stop the ingest before a value names another value's distribution, and the pass
// changes nothing.
TEST(ValueBuffer, DistributionIdsOutOfStepStopTheIngest) {
  TempDir tmp;
  const fs::path trial = tmp.path / "trial";
  write_steps(trial, 0, 2, {"worker_0"});
  Database db((tmp.path / "t.db").string());
  run(db, trial);
  write_steps(trial, 2, 4, {"worker_0"});
  expect_ids_out_of_step_stop(db, trial, "value_distribution", "distribution_id",
                              "nan, pos_inf, neg_inf, zero, negative, positive", "-1, 0, 0, 0, 0, 0");
}

// value_blob rows go kValueBatch to an INSERT, their ids SQLite's choice: a file of more blobs
// than two batches, after an ingest that stored blobs already, leaves every value row naming its
// own blob (each tensor's last element is its number).
TEST(ValueBuffer, EveryBlobStoredApartIsItsValuesOwn) {
  TempDir tmp;
  const fs::path trial = tmp.path / "trial";
  write_steps(trial, 0, 2, {"worker_0"});
  Database db((tmp.path / "t.db").string());
  run(db, trial);
  const size_t blobs = 2 * ValueWriter::kValueBatch + 5;
  std::vector<float> big(1024);
  {
    TrialWriter w(trial.string());
    auto s = w.begin_step(2, "worker_0", TrialMode::kTrain, 2);
    for (size_t t = 0; t < blobs; ++t) {
      for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<float>(i);
      big.back() = static_cast<float>(t);
      s->add_tensor("many_" + std::to_string(t), DType::Float32, {32, 32}, big.data(), big.size() * 4);
    }
    s->close();
  }
  run(db, trial);
  EXPECT_EQ(scalar(db, "SELECT count(*) FROM value_blob"), static_cast<int64_t>(blobs) + 2);
  Statement q(db.handle(),
              "SELECT t.name, substr(b.data, -4) FROM value v JOIN tensor t USING (tensor_id) "
              "JOIN value_blob b USING (value_id) WHERE t.name LIKE 'many_%'");
  size_t seen = 0;
  while (q.step()) {
    const int64_t t = std::stoll(q.text(0).substr(5));
    const std::string_view last = q.blob(1);
    float x = -1;
    ASSERT_EQ(last.size(), sizeof x);
    std::memcpy(&x, last.data(), sizeof x);  // little-endian, as written
    EXPECT_EQ(x, static_cast<float>(t)) << q.text(0);
    ++seen;
  }
  EXPECT_EQ(seen, blobs);
}

// value_blob ids out of step with the ones the value rows name (a row inserted behind the
// writer's back) stop the ingest, like the distributions' above.
TEST(ValueBuffer, BlobIdsOutOfStepStopTheIngest) {
  TempDir tmp;
  const fs::path trial = tmp.path / "trial";
  write_steps(trial, 0, 2, {"worker_0"});
  Database db((tmp.path / "t.db").string());
  run(db, trial);
  {  // two blobs in one INSERT: the second's id is SQLite's choice after the trigger's row
    TrialWriter w(trial.string());
    auto s = w.begin_step(2, "worker_0", TrialMode::kTrain, 2);
    const std::vector<float> big(1024, 1.5f);
    for (const char* name : {"a", "b"}) s->add_tensor(name, DType::Float32, {32, 32}, big.data(), big.size() * 4);
    s->close();
  }
  expect_ids_out_of_step_stop(db, trial, "value_blob", "value_id", "data", "x'00'");
}

namespace {

bool has_step_index(Database& db) {
  return scalar(db, "SELECT count(*) FROM sqlite_schema WHERE type = 'index' AND name = 'value_by_step'") == 1;
}

std::string step_index_stat(Database& db) {
  Statement q(db.handle(), "SELECT stat FROM sqlite_stat1 WHERE tbl = 'value' AND idx = 'value_by_step'");
  return q.step() ? q.text(0) : "(none)";
}

std::string query_plan(Database& db, const std::string& sql) {
  std::string plan;
  Statement q(db.handle(), "EXPLAIN QUERY PLAN " + sql);
  while (q.step()) plan += q.text(3) + "\n";
  return plan;
}

}  // namespace

// A transaction that begins with no value row leaves value_by_step out and builds it at its flush
// (deferred_index.h): the index is gone while the rows go in, and back before the commit with its
// planner statistics, so a step filter is still a search of it. A later transaction keeps it.
TEST(ValueBuffer, ValueByStepIsBuiltAtTheEndOfATransactionIntoAnEmptyTable) {
  TempDir tmp;
  Writer w(tmp.path / "t.db", kFewRows);
  const std::string stat = step_index_stat(w.db);
  ASSERT_NE(stat, "(none)");
  std::vector<Status> errors;
  {
    Transaction tx(w.db);
    for (int step = 0; step < 4; ++step) {
      PreparedFile f = w.file(step, "worker_0", {"a", "b", "c"});
      w.write(f, &errors);
    }
    EXPECT_FALSE(has_step_index(w.db));
    w.writer.flush();
    EXPECT_TRUE(has_step_index(w.db));
    tx.commit();
  }
  EXPECT_EQ(step_index_stat(w.db), stat);
  EXPECT_EQ(scalar(w.db, "SELECT count(*) FROM pragma_integrity_check WHERE integrity_check <> 'ok'"), 0);
  EXPECT_NE(query_plan(w.db, "SELECT * FROM tensor_values WHERE step = 2").find("USING INDEX value_by_step"),
            std::string::npos);
  {
    Transaction tx(w.db);
    PreparedFile f = w.file(4, "worker_0", {"a"});
    w.write(f, &errors);
    EXPECT_TRUE(has_step_index(w.db));  // value has rows: kept up row by row
    w.writer.flush();
    tx.commit();
  }
  EXPECT_TRUE(errors.empty());
  EXPECT_EQ(scalar(w.db, "SELECT count(*) FROM value INDEXED BY value_by_step WHERE trial_id = 1 AND tensor_step = 4"),
            1);
  EXPECT_EQ(w.values(),
            "a@0/1=0.5 a@1/1=1.5 a@2/1=2.5 a@3/1=3.5 a@4/1=4.5 b@0/1=0.5 b@1/1=1.5 b@2/1=2.5 b@3/1=3.5 "
            "c@0/1=0.5 c@1/1=1.5 c@2/1=2.5 c@3/1=3.5 ");
}

// A transaction rolled back while value_by_step is left out brings it back with its statistics, and
// the next transaction into the still empty table leaves it out and builds it again.
TEST(ValueBuffer, ARolledBackTransactionKeepsValueByStep) {
  TempDir tmp;
  Writer w(tmp.path / "t.db", {});
  for (const char* t : {"a", "b"}) w.catalog.tensor_id(t);
  w.catalog.worker_id("worker_0");
  const std::string stat = step_index_stat(w.db);
  std::vector<Status> errors;
  {
    Transaction tx(w.db);
    PreparedFile a = w.file(1, "worker_0", {"a", "b"});
    w.write(a, &errors);
    EXPECT_FALSE(has_step_index(w.db));
    w.writer.discard();
  }
  EXPECT_TRUE(has_step_index(w.db));
  EXPECT_EQ(step_index_stat(w.db), stat);
  {
    Transaction tx(w.db);
    PreparedFile b = w.file(2, "worker_0", {"a"});
    w.write(b, &errors);
    EXPECT_FALSE(has_step_index(w.db));
    w.writer.flush();
    tx.commit();
  }
  EXPECT_TRUE(has_step_index(w.db));
  EXPECT_EQ(step_index_stat(w.db), stat);
  EXPECT_EQ(scalar(w.db, "SELECT count(*) FROM pragma_integrity_check WHERE integrity_check <> 'ok'"), 0);
  EXPECT_EQ(w.values(), "a@2/1=2.5 ");
}
