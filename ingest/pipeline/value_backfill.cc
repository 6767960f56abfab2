// Adding the bytes of values stored without them (value_backfill.h).
#include "ingest/pipeline/value_backfill.h"

#include <set>
#include <string>
#include <vector>

#include "ingest/pipeline/record_decoder.h"
#include "ingest/pipeline/step_completion.h"
#include "ingest/pipeline/value_writer.h"

namespace trialdb {

namespace {

// A value stored without its bytes, and where its record is.
struct MissingValue {
  int64_t tensor_id = 0, tensor_step = 0, step_offset = 0, worker_id = 0;
  std::string tensor, event_file;
  uint64_t offset = 0, length = 0;
};

// Values with a location and a blob in value.data, in key order after `after` (a header without
// bytes is always that small); the caller keeps those whose blob is such a header.
constexpr const char* kCandidates =
    "SELECT v.tensor_id, v.tensor_step, v.step_offset, v.worker_id, tn.name, f.path, v.rec_offset, v.rec_length, "
    "v.data FROM value v JOIN tensor tn ON tn.tensor_id = v.tensor_id JOIN event_file f ON f.file_id = v.file_id "
    "WHERE v.trial_id = ?1 AND v.value_id IS NULL AND v.data IS NOT NULL "
    "AND (v.tensor_id, v.tensor_step, v.step_offset, v.worker_id) > (?2, ?3, ?4, ?5) "
    "ORDER BY v.tensor_id, v.tensor_step, v.step_offset, v.worker_id LIMIT ?6";
constexpr const char* kKey = "WHERE tensor_id = ?2 AND tensor_step = ?3 AND step_offset = ?4 AND worker_id = ?5";

}  // namespace

size_t add_missing_values(Database& db, TrialSource& source, int64_t trial_id, const Selection& selection,
                          bool compress, const std::function<void(const Status&)>& report, uint64_t* bytes_read) {
  Statement candidates(db.handle(), kCandidates);
  Statement set_inline(db.handle(), std::string("UPDATE value SET data = ?1 ") + kKey);
  Statement set_apart(db.handle(), std::string("UPDATE value SET data = NULL, value_id = ?1 ") + kKey);
  Statement insert_blob(db.handle(), "INSERT INTO value_blob(value_id, data) VALUES (?, ?)");
  Statement max_value_id(db.handle(), "SELECT coalesce(max(value_id), 0) FROM value_blob");
  StepCompletion steps(db, trial_id);  // the steps whose values got their bytes changed
  const uint64_t max_blob_bytes = static_cast<uint64_t>(sqlite3_limit(db.handle(), SQLITE_LIMIT_LENGTH, -1));
  MissingValue last{-1, 0, 0, 0, {}, {}, 0, 0};
  size_t added = 0;
  for (bool more = true; more;) {
    // One batch: the next values without bytes, up to the batch's size.
    std::vector<MissingValue> batch;
    uint64_t batch_bytes = 0;
    candidates.bind(1, trial_id)
        .bind(2, last.tensor_id)
        .bind(3, last.tensor_step)
        .bind(4, last.step_offset)
        .bind(5, last.worker_id)
        .bind(6, static_cast<int64_t>(kBackfillBatchValues));
    more = false;
    while (candidates.step()) {
      more = true;
      last = MissingValue{candidates.int64(0),
                          candidates.int64(1),
                          candidates.int64(2),
                          candidates.int64(3),
                          candidates.text(4),
                          candidates.text(5),
                          static_cast<uint64_t>(candidates.int64(6)),
                          static_cast<uint64_t>(candidates.int64(7))};
      const auto* data = static_cast<const char*>(sqlite3_column_blob(candidates.handle(), 8));
      const std::string_view blob(data, static_cast<size_t>(sqlite3_column_bytes(candidates.handle(), 8)));
      if (!blob_bytes_not_stored(blob) || !selection.selects_step(last.tensor_step + last.step_offset) ||
          !selection.selects_tensor(last.tensor))
        continue;
      batch.push_back(last);
      batch_bytes += last.length;
      if (batch_bytes >= kBackfillBatchBytes) break;
    }
    candidates.reset();
    if (batch.empty()) continue;

    std::vector<TrialSource::Range> ranges;
    for (const auto& m : batch) ranges.push_back({m.event_file, m.offset, m.length});
    std::vector<std::optional<ReadBuffer>> records;
    if (Status st = source.read_ranges(ranges, &records); !st.is_ok()) throw Error(st);
    Transaction tx(db);
    std::set<int64_t> changed_steps;
    int64_t next_value_id = 1;
    if (max_value_id.step()) next_value_id = max_value_id.int64(0) + 1;
    max_value_id.reset();
    for (size_t i = 0; i < batch.size(); ++i) {
      const MissingValue& m = batch[i];
      const int64_t step = m.tensor_step + m.step_offset;
      const std::string where = source.root() + "/" + m.event_file;
      if (!records[i] || records[i]->size() != m.length) {
        report(Status::invalid("tensor '" + m.tensor + "': its record at offset " + std::to_string(m.offset) +
                               " is no longer in the event file; its bytes were not added")
                   .at(where, step));
        continue;
      }
      *bytes_read += m.length;
      DecodedRecord d = decode_record(IndexEntry{m.tensor, m.offset, m.length}, step, *records[i], m.offset,
                                      m.event_file, max_blob_bytes, RecordStatistics::kSkip);
      if (d.error.empty() && !d.too_large && !d.invalid_entry) encode_record(d, compress, records[i]->data(), 0, false);
      if (!d.error.empty() || d.too_large || d.invalid_entry) {
        report(Status::invalid(d.error.empty() ? d.notice : d.error).at(where, step));
        continue;
      }
      const std::string_view blob = d.blob.bytes();
      Statement& set = !compress && blob.size() <= ValueWriter::kInlineBlobBytes ? set_inline : set_apart;
      if (&set == &set_apart) {
        insert_blob.bind(1, next_value_id).bind_blob_static(2, blob.data(), blob.size()).run();
        set.bind(1, next_value_id++);
      } else {
        set.bind_blob_static(1, blob.data(), blob.size());
      }
      set.bind(2, m.tensor_id).bind(3, m.tensor_step).bind(4, m.step_offset).bind(5, m.worker_id).run();
      changed_steps.insert(step);
      ++added;
    }
    for (const int64_t step : changed_steps) steps.record_values_changed(step);
    tx.commit();
  }
  return added;
}

}  // namespace trialdb
