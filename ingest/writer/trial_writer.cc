// TrialWriter implementation. See trial_writer.h for what is reproduced and why.
#include "ingest/writer/trial_writer.h"

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "ingest/format/crc32c.h"
#include "ingest/format/proto/smdebug_event.pb.h"

namespace trialdb {

namespace fs = std::filesystem;

namespace {

// Protobuf wire helpers: just enough to encode the Event headers around tensor_content.
size_t varint_size(uint64_t v) {
  size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}
void put_varint(std::string* out, uint64_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>(v | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}
void put_tag(std::string* out, int field, int wire_type) {
  put_varint(out, (static_cast<uint64_t>(field) << 3) | wire_type);
}
// Size of a length-delimited field with a one-byte key.
size_t delimited_size(size_t payload) { return 1 + varint_size(payload) + payload; }
void put_u64le(std::string* out, uint64_t v) {
  char b[8];
  std::memcpy(b, &v, 8);
  out->append(b, 8);
}

[[noreturn]] void fail_io(const std::string& what, const std::string& path) {
  throw std::runtime_error(what + " " + path + ": " + std::strerror(errno));
}

void ensure_parent(const fs::path& p) {
  std::error_code ec;
  fs::create_directories(p.parent_path(), ec);
  if (ec) throw std::runtime_error("cannot create folder " + p.parent_path().string() + ": " + ec.message());
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

std::string step12(int64_t step) {
  char b[32];
  std::snprintf(b, sizeof b, "%012lld", static_cast<long long>(step));
  return b;
}

// Python's json.dumps of a list of ints: "[4, 1, 3, 3]".
void append_int_list(std::string* out, const std::vector<int64_t>& v) {
  out->push_back('[');
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) out->append(", ");
    out->append(std::to_string(v[i]));
  }
  out->push_back(']');
}
void append_string_list(std::string* out, const std::vector<std::string>& v) {
  out->push_back('[');
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) out->append(", ");
    append_json_string(out, v[i]);
  }
  out->push_back(']');
}

void append_save_config(std::string* out, const SaveConfig& c) {
  out->append("{\"save_interval\": " + std::to_string(c.save_interval) +
              ", \"save_steps\": [], \"start_step\": " + std::to_string(c.start_step) +
              ", \"end_step\": " + (c.end_step < 0 ? std::string("null") : std::to_string(c.end_step)) +
              "}");
}

}  // namespace

const char* trial_mode_name(TrialMode m) {
  switch (m) {
    case TrialMode::kTrain: return "TRAIN";
    case TrialMode::kEval: return "EVAL";
    case TrialMode::kPredict: return "PREDICT";
    case TrialMode::kGlobal: return "GLOBAL";
  }
  return "GLOBAL";
}

int tf_dtype_number(DType t) {
  switch (t) {
    case DType::Float32: return 1;
    case DType::Float64: return 2;
    case DType::Int32: return 3;
    case DType::UInt8: return 4;
    case DType::Int16: return 5;
    case DType::Int8: return 6;
    case DType::String: return 0;   // smdebug leaves dtype unset for strings
    case DType::Complex64: return 8;
    case DType::Int64: return 9;
    case DType::Bool: return 10;
    case DType::BFloat16: return 14;
    case DType::UInt16: return 17;
    case DType::Complex128: return 18;
    case DType::Float16: return 19;
    case DType::UInt32: return 22;
    case DType::UInt64: return 23;
  }
  return 0;
}

std::string event_file_name(int64_t step, std::string_view worker) {
  std::string s = step12(step);
  return "events/" + s + "/" + s + "_" + std::string(worker) + ".tfevents";
}

std::string index_file_name(int64_t step, std::string_view worker) {
  char folder[32];
  std::snprintf(folder, sizeof folder, "%09lld", static_cast<long long>(step / 1000));
  return "index/" + std::string(folder) + "/" + step12(step) + "_" + std::string(worker) + ".json";
}

std::string collections_file_name(std::string_view worker) {
  return "collections/000000000/" + std::string(worker) + "_collections.json";
}

void append_json_string(std::string* out, std::string_view s) {
  static const char* hex = "0123456789abcdef";
  auto put_u = [&](uint32_t u) {
    char b[6] = {'\\', 'u', hex[(u >> 12) & 15], hex[(u >> 8) & 15], hex[(u >> 4) & 15], hex[u & 15]};
    out->append(b, 6);
  };
  out->push_back('"');
  for (size_t i = 0; i < s.size();) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      switch (c) {
        case '"': out->append("\\\""); break;
        case '\\': out->append("\\\\"); break;
        case '\n': out->append("\\n"); break;
        case '\r': out->append("\\r"); break;
        case '\t': out->append("\\t"); break;
        case '\b': out->append("\\b"); break;
        case '\f': out->append("\\f"); break;
        default:
          if (c < 0x20) put_u(c);
          else out->push_back(static_cast<char>(c));
      }
      ++i;
      continue;
    }
    // Decode one UTF-8 sequence; invalid bytes are escaped as themselves (U+00xx).
    int len = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 0;
    uint32_t cp = 0;
    bool ok = len > 0 && i + len <= s.size();
    if (ok) {
      cp = c & (0x7F >> len);
      for (int k = 1; k < len; ++k) {
        unsigned char cc = static_cast<unsigned char>(s[i + k]);
        if ((cc & 0xC0) != 0x80) ok = false;
        cp = (cp << 6) | (cc & 0x3F);
      }
    }
    if (!ok) {
      put_u(c);
      ++i;
      continue;
    }
    if (cp >= 0x10000) {
      cp -= 0x10000;
      put_u(0xD800 + (cp >> 10));
      put_u(0xDC00 + (cp & 0x3FF));
    } else {
      put_u(cp);
    }
    i += len;
  }
  out->push_back('"');
}

std::string collections_json(const std::vector<CollectionSpec>& collections, int num_workers) {
  std::string o = "{\"collections\": {";
  for (size_t i = 0; i < collections.size(); ++i) {
    const CollectionSpec& c = collections[i];
    if (i) o += ", ";
    append_json_string(&o, c.name);
    o += ": {\"name\": ";
    append_json_string(&o, c.name);
    o += ", \"include_regex\": ";
    append_string_list(&o, c.include_regex);
    o += ", \"tensor_names\": ";
    append_string_list(&o, c.tensor_names);
    o += std::string(", \"reduction_config\": {\"save_raw_tensor\": ") + (c.save_raw_tensor ? "true" : "false") +
         ", \"reductions\": ";
    append_json_string(&o, c.reductions);
    o += std::string(", \"save_shape\": ") + (c.save_shape ? "true" : "false") + "}, \"save_config\": {";
    o += "\"TRAIN\": ";
    append_save_config(&o, c.train);
    o += ", \"EVAL\": ";
    append_save_config(&o, c.eval);
    o += ", \"PREDICT\": ";
    append_save_config(&o, c.predict);
    o += ", \"GLOBAL\": ";
    append_save_config(&o, c.global);
    o += std::string("}, \"save_histogram\": ") + (c.save_histogram ? "true" : "false") + "}";
  }
  o += "}, \"_meta\": {\"num_workers\": " + std::to_string(num_workers) + "}}";
  return o;
}

// ---- TrialWriter ----

TrialWriter::TrialWriter(std::string root, TrialWriterOptions options)
    : root_(std::move(root)), options_(options) {
  while (root_.size() > 1 && root_.back() == '/') root_.pop_back();
  std::error_code ec;
  fs::create_directories(root_, ec);
  if (ec) throw std::runtime_error("cannot create trial folder " + root_ + ": " + ec.message());
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
  if (step < 0) throw std::invalid_argument("step must be >= 0, got " + std::to_string(step));
  if (worker.empty()) throw std::invalid_argument("worker name must not be empty");
  return std::make_unique<StepWriter>(this, step, std::string(worker), mode, mode_step, staged);
}

void TrialWriter::write_end_marker() { write_file("training_job_end.ts", "", false); }

// ---- StepWriter ----

StepWriter::StepWriter(TrialWriter* trial, int64_t step, std::string worker, TrialMode mode,
                       int64_t mode_step, bool staged)
    : trial_(trial), step_(step), worker_(std::move(worker)), mode_(mode), mode_step_(mode_step),
      staged_(staged), event_rel_(event_file_name(step, worker_)), index_rel_(index_file_name(step, worker_)) {
  pb::SummaryMetadata md;
  auto* a = md.add_plugin_data();
  a->set_plugin_name("mode_step");
  a->set_content(std::to_string(mode_step));
  auto* b = md.add_plugin_data();
  b->set_plugin_name("mode");
  b->set_content(std::to_string(static_cast<int>(mode)));
  md.SerializeToString(&metadata_bytes_);
  head_.reserve(512);
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
    std::setvbuf(file_, nullptr, _IOFBF, 1 << 20);
  }
  if (trial_->options().file_version_record) {
    pb::Event ev;
    ev.set_wall_time(wall_time());
    ev.set_file_version("brain.Event:2");
    append_record(ev.SerializeAsString(), nullptr, 0);
  }
}

void StepWriter::check_open() const {
  if (closed_) throw std::logic_error("step " + std::to_string(step_) + " of " + worker_ + " is already closed");
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
  uint64_t length = head.size() + bytes + trailer.size();
  char frame[12];
  std::memcpy(frame, &length, 8);
  uint32_t len_crc = masked_crc32c(frame, 8);
  std::memcpy(frame + 8, &len_crc, 4);
  uint32_t footer = smdebug_constant_footer();
  if (trial_->options().real_data_crc) {
    uint32_t c = crc32c(head.data(), head.size());
    if (bytes) c = crc32c(data, bytes, c);
    c = crc32c(trailer.data(), trailer.size(), c);
    footer = mask_crc32c(c);
  }
  emit(frame, 12);
  emit(head.data(), head.size());
  emit(data, bytes);
  emit(trailer.data(), trailer.size());
  emit(&footer, 4);
}

void StepWriter::append_plain_tensor_event(std::string_view tag, int tf_dtype, const std::vector<int64_t>& shape,
                                           const void* data, size_t bytes) {
  // TensorShapeProto: one Dim{size, name "<tag>_<size>"} per axis.
  std::string shape_bytes;
  for (int64_t d : shape) {
    std::string name = std::string(tag) + "_" + std::to_string(d);
    size_t dim_len = (d != 0 ? 1 + varint_size(static_cast<uint64_t>(d)) : 0) + delimited_size(name.size());
    put_tag(&shape_bytes, 2, 2);
    put_varint(&shape_bytes, dim_len);
    if (d != 0) {
      put_tag(&shape_bytes, 1, 0);
      put_varint(&shape_bytes, static_cast<uint64_t>(d));
    }
    put_tag(&shape_bytes, 2, 2);
    put_varint(&shape_bytes, name.size());
    shape_bytes.append(name);
  }
  // Sizes from the inside out (proto3: zero scalars and empty bytes are not serialized).
  size_t tensor_len = (tf_dtype ? 1 + varint_size(static_cast<uint64_t>(tf_dtype)) : 0) +
                      delimited_size(shape_bytes.size()) + (bytes ? delimited_size(bytes) : 0);
  size_t value_len = (tag.empty() ? 0 : delimited_size(tag.size())) + delimited_size(tensor_len) +
                     delimited_size(metadata_bytes_.size());
  size_t summary_len = delimited_size(value_len);
  double wall = wall_time();
  head_.clear();
  put_tag(&head_, 1, 1);   // wall_time, fixed64
  uint64_t wall_bits;
  std::memcpy(&wall_bits, &wall, 8);
  put_u64le(&head_, wall_bits);
  if (step_ != 0) {
    put_tag(&head_, 2, 0);
    put_varint(&head_, static_cast<uint64_t>(step_));
  }
  put_tag(&head_, 5, 2);   // Event.summary
  put_varint(&head_, summary_len);
  put_tag(&head_, 1, 2);   // Summary.value
  put_varint(&head_, value_len);
  if (!tag.empty()) {
    put_tag(&head_, 1, 2);   // Value.tag
    put_varint(&head_, tag.size());
    head_.append(tag);
  }
  put_tag(&head_, 8, 2);   // Value.tensor
  put_varint(&head_, tensor_len);
  if (tf_dtype) {
    put_tag(&head_, 1, 0);
    put_varint(&head_, static_cast<uint64_t>(tf_dtype));
  }
  put_tag(&head_, 2, 2);
  put_varint(&head_, shape_bytes.size());
  head_.append(shape_bytes);
  if (bytes) {
    put_tag(&head_, 4, 2);   // TensorProto.tensor_content: the caller's bytes follow
    put_varint(&head_, bytes);
  }
  // Value.metadata comes after tensor_content (field 9 > 8), so it is framed as a trailer.
  trailer_.clear();
  put_tag(&trailer_, 9, 2);
  put_varint(&trailer_, metadata_bytes_.size());
  trailer_.append(metadata_bytes_);
  append_record(head_, data, bytes, trailer_);
}

void StepWriter::add_tensor(std::string_view name, DType dtype, const std::vector<int64_t>& shape,
                            const void* data, size_t bytes) {
  check_open();
  if (dtype == DType::String) throw std::invalid_argument("add_tensor: use add_strings for string tensor " + std::string(name));
  int64_t numel = shape_numel(shape.data(), static_cast<int>(shape.size()));
  if (numel < 0 || static_cast<uint64_t>(numel) * dtype_size(dtype) != bytes)
    throw std::invalid_argument("add_tensor " + std::string(name) + ": " + std::to_string(bytes) +
                                " bytes do not match shape " + shape_json(shape.data(), static_cast<int>(shape.size())) +
                                " of " + dtype_name(dtype));
  start_event_file();
  uint64_t start = offset_;
  append_plain_tensor_event(name, tf_dtype_number(dtype), shape, data, bytes);
  entries_.push_back({std::string(name), start, offset_ - start});
}

void StepWriter::add_strings(std::string_view name, const std::vector<std::string>& values,
                             const std::vector<int64_t>& shape) {
  int64_t numel = shape_numel(shape.data(), static_cast<int>(shape.size()));
  if (numel < 0 || static_cast<size_t>(numel) != values.size())
    throw std::invalid_argument("add_strings " + std::string(name) + ": " + std::to_string(values.size()) +
                                " strings do not match shape " + shape_json(shape.data(), static_cast<int>(shape.size())));
  pb::Event ev;
  ev.set_wall_time(wall_time());
  ev.set_step(step_);
  auto* v = ev.mutable_summary()->add_value();
  v->set_tag(std::string(name));
  auto* t = v->mutable_tensor();
  auto* sh = t->mutable_tensor_shape();
  for (int64_t d : shape) {
    auto* dim = sh->add_dim();
    dim->set_size(d);
    dim->set_name(std::string(name) + "_" + std::to_string(d));
  }
  for (const auto& s : values) t->add_string_val(s);
  v->mutable_metadata()->ParseFromString(metadata_bytes_);
  add_event(ev, name);
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
    add_tensor(name, dtype, {}, &value, 8);
  } else if (dtype == DType::Float32) {
    float f = static_cast<float>(value);
    add_tensor(name, dtype, {}, &f, 4);
  } else {
    throw std::invalid_argument("add_reduction: dtype must be float32 or float64");
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
  std::string o = "{\"meta\": {\"mode\": ";
  append_json_string(&o, trial_mode_name(mode_));
  o += ", \"mode_step\": " + std::to_string(mode_step_);
  if (!entries_.empty()) {
    o += ", \"event_file_name\": ";
    append_json_string(&o, event_rel_);
  }
  o += "}, \"tensor_payload\": [";
  for (size_t i = 0; i < entries_.size(); ++i) {
    if (i) o += ", ";
    o += "{\"tensorname\": ";
    append_json_string(&o, entries_[i].name);
    o += ", \"start_idx\": " + std::to_string(entries_[i].start_idx) +
         ", \"length\": " + std::to_string(entries_[i].length) + "}";
  }
  o += "], \"shape_payload\": [";
  for (size_t i = 0; i < shapes_.size(); ++i) {
    if (i) o += ", ";
    o += "{\"tensorname\": ";
    append_json_string(&o, shapes_[i].name);
    o += ", \"originalname\": ";
    append_json_string(&o, shapes_[i].original_name);
    o += ", \"shape\": ";
    append_int_list(&o, shapes_[i].shape);
    o += "}";
  }
  o += "]}";
  return o;
}

void StepWriter::write_event_prefix(uint64_t n) {
  if (!staged_) throw std::logic_error("write_event_prefix needs a staged step");
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
  if (entries_.empty() && shapes_.empty()) return;   // smdebug writes no index for an empty step
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
