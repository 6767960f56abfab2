// One new TensorBoard event file in a run folder: TFRecord-framed Events with the real CRC (the
// framing of ingest/format/tfrecord.h), the file_version Event first, written under a temporary
// name that TensorBoard does not read (it reads every file whose name holds "tfevents"), then
// fsynced and renamed into place, so TensorBoard never sees half a file or a file twice.
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace trialdb::tensorboard {

class EventFile {
 public:
  // Creates the run folder if needed; the file is named events.out.tfevents.<seconds>.trialdb.<n>,
  // n making it sort after every event file already there.
  EventFile(const std::filesystem::path& run_folder, double wall_time);
  ~EventFile();  // removes the temporary file unless committed
  EventFile(const EventFile&) = delete;
  EventFile& operator=(const EventFile&) = delete;

  void append(std::string_view event);
  void commit();  // flush, fsync, rename into place, fsync the folder

  int64_t events() const { return events_; }
  const std::filesystem::path& path() const { return final_; }

 private:
  void flush();
  std::filesystem::path folder_, temp_, final_;
  std::string buffer_;
  int fd_ = -1;
  int64_t events_ = 0;
  bool committed_ = false;
};

}  // namespace trialdb::tensorboard
