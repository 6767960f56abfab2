// A TensorBoard event file written whole (event_file.h).
#include "tensorboard/event_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>

#include "ingest/format/tfrecord.h"
#include "ingest/format/event_encoder.h"
#include "schema/fd_write.h"
#include "schema/status.h"

namespace trialdb::tensorboard {

namespace fs = std::filesystem;

namespace {

constexpr size_t kFlushBytes = 1 << 20;
constexpr std::string_view kEventFilePrefix = "events.out.tfevents.";

Error io_error(const std::string& what, const fs::path& file) {
  return Error(ErrorKind::kIo, what + ": " + std::strerror(errno), file.string());
}

// The number of event files already in the folder: the new file's sequence number, so that
// files of one second sort in the order they were written.
int existing_event_files(const fs::path& folder) {
  int n = 0;
  for (const fs::directory_entry& e : fs::directory_iterator(folder))
    if (e.path().filename().string().rfind(kEventFilePrefix, 0) == 0) ++n;
  return n;
}

}  // namespace

EventFile::EventFile(const fs::path& run_folder, double wall_time) : folder_(run_folder) {
  std::error_code ec;
  fs::create_directories(folder_, ec);
  if (ec) throw Error(ErrorKind::kIo, "cannot create the run folder: " + ec.message(), folder_.string());
  char sequence[16];
  std::snprintf(sequence, sizeof sequence, "%06d", existing_event_files(folder_));
  final_ = folder_ / (std::string(kEventFilePrefix) + std::to_string(static_cast<int64_t>(std::floor(wall_time))) +
                      ".trialdb." + sequence);
  temp_ = folder_ / (".trialdb-partial-" + std::to_string(::getpid()));
  fd_ = ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) throw io_error("cannot create", temp_);
  append(encode_file_version_event(wall_time));
}

EventFile::~EventFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_) ::unlink(temp_.c_str());
}

void EventFile::append(std::string_view event) {
  append_record(&buffer_, event, /*real_crc=*/true);
  ++events_;
  if (buffer_.size() >= kFlushBytes) flush();
}

void EventFile::flush() {
  if (!write_fully(fd_, buffer_)) throw io_error("cannot write", temp_);
  buffer_.clear();
}

void EventFile::commit() {
  flush();
  if (::fsync(fd_) != 0) throw io_error("cannot flush", temp_);
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) throw io_error("cannot close", temp_);
  if (::rename(temp_.c_str(), final_.c_str()) != 0) throw io_error("cannot rename into place", final_);
  committed_ = true;
  const int dir = ::open(folder_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0) {
    ::fsync(dir);
    ::close(dir);
  }
}

}  // namespace trialdb::tensorboard
