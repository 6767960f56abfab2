// TrialWriter: writes trials in the smdebug on-disk format (docs/FORMAT.md), the way smdebug
// 1.0.34's hook does, so tests and benchmarks can make trials of any size without Python.
//
// What it reproduces: one event + index file per (global step, worker), one collections file
// per worker with `_meta.num_workers`, reductions saved as
// `smdebug/reductions/[abs_]<reduction>/<tensor>` scalars, shape payloads, and the
// training_job_end.ts marker. The bytes of each file come from the wire-format encoders beside
// their decoders in ingest/format (tfrecord.h, event_encoder.h, index_file_writer.h,
// collections_file_writer.h); this class handles the files: folders, staging, atomic renames,
// and the index entries of the records it writes.
//
// Speed: a numeric tensor is never copied into a protobuf message. Its Event is encoded as a
// head and a trailer around tensor_content (event_encoder.h) and the caller's buffer goes
// straight to the file.
//
// Two ways to write a step:
//   streaming (default)  records go to "<event file>.tmp" as they are added; close() renames it
//                        and then writes the index file (also via .tmp + rename), as smdebug does.
//   staged               records stay in memory and the caller decides when each file appears:
//                        write_index_file() before the event file, write_event_prefix(n) to
//                        publish the event file in parts. For live-ingest tests.
#pragma once
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ingest/format/collections_file_writer.h"
#include "ingest/format/event_encoder.h"
#include "ingest/format/index_file_writer.h"
#include "schema/value_blob.h"

namespace trialdb {

namespace pb {
class Event;
}

enum class TrialMode : int { kTrain = 1, kEval = 2, kPredict = 3, kGlobal = 4 };
const char* trial_mode_name(TrialMode m);  // "TRAIN", ...

struct TrialWriterOptions {
  bool real_data_crc = false;        // footer = masked CRC of the data (smdebug write_checksum)
  bool file_version_record = false;  // start each event file with a file_version-only Event
  bool atomic_files = true;          // streaming: write "<file>.tmp" then rename
  double wall_time = 0;              // Event.wall_time; 0 = the current time
};

class StepWriter;

class TrialWriter {
 public:
  explicit TrialWriter(std::string root, TrialWriterOptions options = {});
  const std::string& root() const { return root_; }
  const TrialWriterOptions& options() const { return options_; }
  void set_wall_time(double t) { options_.wall_time = t; }  // for byte-identical reruns

  void write_collections(std::string_view worker, int num_workers, const std::vector<CollectionSpec>& collections);
  std::unique_ptr<StepWriter> begin_step(int64_t step, std::string_view worker, TrialMode mode, int64_t mode_step,
                                         bool staged = false);
  void write_end_marker();  // training_job_end.ts (empty)

  // Whole file at root/relative (creating folders), via .tmp + rename when atomic.
  void write_file(const std::string& relative, std::string_view content, bool atomic = true);

 private:
  std::string root_;
  TrialWriterOptions options_;
};

// One (global step, worker): its event file and its index file. Errors throw Error (schema/status.h)
// naming the file.
class StepWriter {
 public:
  StepWriter(TrialWriter* trial, int64_t step, std::string worker, TrialMode mode, int64_t mode_step, bool staged);
  ~StepWriter();  // close()s if the caller did not (errors are then swallowed)
  StepWriter(const StepWriter&) = delete;
  StepWriter& operator=(const StepWriter&) = delete;

  // A numeric tensor: `bytes` of C-order little-endian data in `dtype`, written from `data`
  // without a copy. shape {} is a scalar; a 0 dim is an empty tensor.
  void add_tensor(std::string_view name, DType dtype, const std::vector<int64_t>& shape, const void* data,
                  size_t bytes);
  // A string tensor: dtype 0, one string_val per element.
  void add_strings(std::string_view name, const std::vector<std::string>& values, const std::vector<int64_t>& shape);
  // The scalar `smdebug/reductions/[abs_]<reduction>/<tensor>` (tensor's ":<digits>" suffix
  // dropped). dtype: Float32 (PyTorch hook) or Float64.
  void add_reduction(std::string_view tensor, std::string_view reduction, bool abs, double value,
                     DType dtype = DType::Float32);
  // A shape_payload entry (save_shape). original_name "" = name.
  void add_shape(std::string_view name, const std::vector<int64_t>& shape, std::string_view original_name = {});
  // Any Event (e.g. typed *_val encodings); index_name "" = no index entry.
  void add_event(const pb::Event& event, std::string_view index_name);

  using IndexEntry = TensorPayloadEntry;
  const std::vector<IndexEntry>& index_entries() const { return entries_; }
  uint64_t event_bytes() const { return offset_; }  // event file size once complete
  const std::string& event_path() const { return event_rel_; }
  const std::string& index_path() const { return index_rel_; }
  std::string index_json() const;

  // Staged mode only: publish the first n bytes of the event file (n grows; writes the event
  // file in place, no .tmp) / publish the index file now.
  void write_event_prefix(uint64_t n);
  void write_index_file();

  // Finishes the step: the rest of the event file, then the index file (unless written).
  void close();

 private:
  void append_record(std::string_view head, const void* data, size_t bytes, std::string_view trailer = {});
  void emit(const void* p, size_t n);
  void start_event_file();
  void check_open() const;
  double wall_time() const;

  TrialWriter* trial_;
  int64_t step_;
  std::string worker_;
  TrialMode mode_;
  int64_t mode_step_;
  bool staged_;
  bool closed_ = false;
  bool index_written_ = false;
  bool started_ = false;  // event file opened / file_version record written
  std::string event_rel_, index_rel_;
  std::string metadata_bytes_;  // serialized SummaryMetadata, the same for every record
  TensorContentFrame frame_;    // scratch: a numeric tensor's Event around its data
  std::vector<IndexEntry> entries_;
  std::vector<ShapePayloadEntry> shapes_;
  uint64_t offset_ = 0;
  FILE* file_ = nullptr;      // streaming: the open .tmp (or final) event file
  std::string staged_bytes_;  // staged: the whole event file
  uint64_t published_ = 0;    // staged: bytes written to disk so far
};

}  // namespace trialdb
