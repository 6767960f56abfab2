// TrialWriter implementation. See trial_writer.h for what is reproduced and why.
#include "ingest/writer/trial_writer.h"

#include "schema/status.h"

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "ingest/format/crc32c.h"
#include "ingest/format/proto/smdebug_event.pb.h"
#include "ingest/format/tfrecord.h"

namespace trialdb {

namespace fs = std::filesystem;

namespace {

// stdio buffer of a streamed event file: large records go out in few writes.
constexpr size_t kEventFileBufferBytes = 1 << 20;

[[noreturn]] void fail_io(const std::string& what, const std::string& path) {
  throw Error(ErrorKind::kIo, what + " " + path + ": " + std::strerror(errno));
}

void ensure_parent(const fs::path& p) {
  std::error_code ec;
  fs::create_directories(p.parent_path(), ec);
  if (ec) throw Error(ErrorKind::kIo, "cannot create folder " + p.parent_path().string() + ": " + ec.message());
}

void write_whole(const fs::path& path, std::string_view content) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) fail_io("cannot create", path.string());
  bool ok = content.empty() || std::fwrite(content.data(), 1, content.size(), f) == content.size();
  ok = (std::fclose(f) == 0) && ok;
  if (!ok) fail_io("cannot write", path.string());
}

void rename_or_throw(const fs::path& from, const fs::path& to) {
  if (std::rename(from.c_str(), to.c_str()) != 0) fail_io("cannot rename to", to.string());
}

}  // namespace

// TrialMode is the writer's spelling of the format's Mode: the same numbers.
static_assert(static_cast<int>(TrialMode::kTrain) == static_cast<int>(Mode::kTrain) &&
              static_cast<int>(TrialMode::kEval) == static_cast<int>(Mode::kEval) &&
              static_cast<int>(TrialMode::kPredict) == static_cast<int>(Mode::kPredict) &&
              static_cast<int>(TrialMode::kGlobal) == static_cast<int>(Mode::kGlobal));

const char* trial_mode_name(TrialMode m) { return mode_name(static_cast<Mode>(m)); }

// ---- TrialWriter ----

TrialWriter::TrialWriter(std::string root, TrialWriterOptions options) : root_(std::move(root)), options_(options) {
  while (root_.size() > 1 && root_.back() == '/') root_.pop_back();
  std::error_code ec;
  fs::create_directories(root_, ec);
  if (ec) throw Error(ErrorKind::kIo, "cannot create trial folder " + root_ + ": " + ec.message());
}

void TrialWriter::write_file(const std::string& relative, std::string_view content, bool atomic) {
  fs::path path = fs::path(root_) / relative;
  ensure_parent(path);
  if (!atomic) return write_whole(path, content);
  fs::path tmp = path.string() + ".tmp";
  write_whole(tmp, content);
  rename_or_throw(tmp, path);
}

void TrialWriter::write_collections(std::string_view worker, int num_workers,
                                    const std::vector<CollectionSpec>& collections) {
  write_file(collections_file_name(worker), collections_json(collections, num_workers), options_.atomic_files);
}

std::unique_ptr<StepWriter> TrialWriter::begin_step(int64_t step, std::string_view worker, TrialMode mode,
                                                    int64_t mode_step, bool staged) {
  if (step < 0) throw Error(ErrorKind::kUsage, "step must be >= 0, got " + std::to_string(step));
  if (worker.empty()) throw Error(ErrorKind::kUsage, "worker name must not be empty");
  return std::make_unique<StepWriter>(this, step, std::string(worker), mode, mode_step, staged);
}

void TrialWriter::write_end_marker() { write_file("training_job_end.ts", "", false); }

// ---- StepWriter ----

StepWriter::StepWriter(TrialWriter* trial, int64_t step, std::string worker, TrialMode mode, int64_t mode_step,
                       bool staged)
    : trial_(trial),
      step_(step),
      worker_(std::move(worker)),
      mode_(mode),
      mode_step_(mode_step),
      staged_(staged),
      event_rel_(event_file_name(step, worker_)),
      index_rel_(index_file_name(step, worker_)) {
  metadata_bytes_ = encode_mode_plugin_metadata(static_cast<Mode>(mode), mode_step);
}

StepWriter::~StepWriter() {
  try {
    close();
  } catch (...) {
  }
  if (file_) std::fclose(file_);
}

// Opens the event file (streaming) and writes the optional file_version record, once.
void StepWriter::start_event_file() {
  if (started_) return;
  started_ = true;
  if (!staged_) {
    fs::path path = fs::path(trial_->root()) / event_rel_;
    ensure_parent(path);
    std::string open_path = trial_->options().atomic_files ? path.string() + ".tmp" : path.string();
    file_ = std::fopen(open_path.c_str(), "wb");
    if (!file_) fail_io("cannot create", open_path);
    std::setvbuf(file_, nullptr, _IOFBF, kEventFileBufferBytes);
  }
  if (trial_->options().file_version_record) append_record(encode_file_version_event(wall_time()), nullptr, 0);
}

void StepWriter::check_open() const {
  if (closed_)
    throw Error(ErrorKind::kUsage, "step " + std::to_string(step_) + " of " + worker_ + " is already closed");
}

double StepWriter::wall_time() const {
  double wall = trial_->options().wall_time;
  if (wall != 0) return wall;
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

void StepWriter::emit(const void* p, size_t n) {
  if (n == 0) return;
  if (staged_) {
    staged_bytes_.append(static_cast<const char*>(p), n);
  } else if (std::fwrite(p, 1, n, file_) != n) {
    fail_io("cannot write", trial_->root() + "/" + event_rel_);
  }
  offset_ += n;
}

// Frames one record whose payload is head | data | trailer; data is written from the caller's
// buffer. The footer is the smdebug constant unless real CRCs were asked for.
void StepWriter::append_record(std::string_view head, const void* data, size_t bytes, std::string_view trailer) {
  check_open();
  start_event_file();
  const RecordHeader header = record_header(head.size() + bytes + trailer.size());
  uint32_t footer = smdebug_constant_footer();
  if (trial_->options().real_data_crc) {
    uint32_t data_crc = crc32c(head.data(), head.size());
    if (bytes) data_crc = crc32c(data, bytes, data_crc);
    footer = record_footer(crc32c(trailer.data(), trailer.size(), data_crc));
  }
  emit(header.data(), header.size());
  emit(head.data(), head.size());
  emit(data, bytes);
  emit(trailer.data(), trailer.size());
  emit(&footer, kRecordFooterBytes);
}

void StepWriter::add_tensor(std::string_view name, DType dtype, const std::vector<int64_t>& shape, const void* data,
                            size_t bytes) {
  check_open();
  if (dtype == DType::String)
    throw Error(ErrorKind::kUsage, "add_tensor: use add_strings for string tensor " + std::string(name));
  int64_t numel = shape_numel(shape.data(), static_cast<int>(shape.size()));
  if (numel < 0 || static_cast<uint64_t>(numel) * dtype_size(dtype) != bytes)
    throw Error(ErrorKind::kUsage,
                "add_tensor " + std::string(name) + ": " + std::to_string(bytes) + " bytes do not match shape " +
                    shape_json(shape.data(), static_cast<int>(shape.size())) + " of " + dtype_name(dtype));
  start_event_file();
  uint64_t start = offset_;
  encode_tensor_content_event(
      {.wall_time = wall_time(), .step = step_, .tag = name, .shape = shape, .plugin_metadata = metadata_bytes_},
      tf_dtype_number(dtype), bytes, &frame_);
  append_record(frame_.head, data, bytes, frame_.trailer);
  entries_.push_back({std::string(name), start, offset_ - start});
}

void StepWriter::add_strings(std::string_view name, const std::vector<std::string>& values,
                             const std::vector<int64_t>& shape) {
  int64_t numel = shape_numel(shape.data(), static_cast<int>(shape.size()));
  if (numel < 0 || static_cast<size_t>(numel) != values.size())
    throw Error(ErrorKind::kUsage, "add_strings " + std::string(name) + ": " + std::to_string(values.size()) +
                                       " strings do not match shape " +
                                       shape_json(shape.data(), static_cast<int>(shape.size())));
  check_open();
  start_event_file();
  const uint64_t start = offset_;
  append_record(
      encode_string_tensor_event(
          {.wall_time = wall_time(), .step = step_, .tag = name, .shape = shape, .plugin_metadata = metadata_bytes_},
          values),
      nullptr, 0);
  entries_.push_back({std::string(name), start, offset_ - start});
}

void StepWriter::add_reduction(std::string_view tensor, std::string_view reduction, bool abs, double value,
                               DType dtype) {
  std::string base(tensor);
  // The hook drops a TF output suffix ":<digits>" from the tensor name.
  size_t colon = base.rfind(':');
  if (colon != std::string::npos && colon + 1 < base.size() &&
      base.find_first_not_of("0123456789", colon + 1) == std::string::npos)
    base.resize(colon);
  std::string name = "smdebug/reductions/" + std::string(abs ? "abs_" : "") + std::string(reduction) + "/" + base;
  if (dtype == DType::Float64) {
    add_tensor(name, dtype, {}, &value, sizeof value);
  } else if (dtype == DType::Float32) {
    float f = static_cast<float>(value);
    add_tensor(name, dtype, {}, &f, sizeof f);
  } else {
    throw Error(ErrorKind::kUsage, "add_reduction: dtype must be float32 or float64");
  }
}

void StepWriter::add_shape(std::string_view name, const std::vector<int64_t>& shape, std::string_view original_name) {
  check_open();
  shapes_.push_back({std::string(name), std::string(original_name.empty() ? name : original_name), shape});
}

void StepWriter::add_event(const pb::Event& event, std::string_view index_name) {
  check_open();
  start_event_file();
  uint64_t start = offset_;
  std::string bytes = event.SerializeAsString();
  append_record(bytes, nullptr, 0);
  if (!index_name.empty()) entries_.push_back({std::string(index_name), start, offset_ - start});
}

std::string StepWriter::index_json() const {
  return index_file_json(static_cast<Mode>(mode_), mode_step_, event_rel_, entries_, shapes_);
}

void StepWriter::write_event_prefix(uint64_t n) {
  if (!staged_) throw Error(ErrorKind::kUsage, "write_event_prefix needs a staged step");
  if (n > staged_bytes_.size()) n = staged_bytes_.size();
  if (n <= published_ && published_ != 0) return;
  fs::path path = fs::path(trial_->root()) / event_rel_;
  ensure_parent(path);
  FILE* f = std::fopen(path.c_str(), published_ == 0 ? "wb" : "ab");
  if (!f) fail_io("cannot open", path.string());
  size_t len = n - published_;
  bool ok = len == 0 || std::fwrite(staged_bytes_.data() + published_, 1, len, f) == len;
  ok = (std::fclose(f) == 0) && ok;
  if (!ok) fail_io("cannot write", path.string());
  published_ = n;
}

void StepWriter::write_index_file() {
  if (entries_.empty() && shapes_.empty()) return;  // smdebug writes no index for an empty step
  trial_->write_file(index_rel_, index_json(), !staged_ && trial_->options().atomic_files);
  index_written_ = true;
}

void StepWriter::close() {
  if (closed_) return;
  closed_ = true;
  if (staged_) {
    if (!staged_bytes_.empty()) write_event_prefix(staged_bytes_.size());
  } else if (file_) {
    FILE* f = file_;
    file_ = nullptr;
    fs::path path = fs::path(trial_->root()) / event_rel_;
    if (std::fclose(f) != 0) fail_io("cannot write", path.string());
    if (trial_->options().atomic_files) rename_or_throw(path.string() + ".tmp", path);
  }
  if (!index_written_) write_index_file();
}

}  // namespace trialdb
