// write_fully(fd, bytes): every byte written, as one write(2) may write a part or be interrupted.
// The new database's copy (new_file_image.cc), the Parquet export's local files
// (export/local_target.cc) and TensorBoard's event files (tensorboard/event_file.cc) write so.
//
//   if (!write_fully(fd, bytes)) throw Error(ErrorKind::kIo, std::strerror(errno), path);
#pragma once
#include <unistd.h>

#include <cerrno>
#include <string_view>

namespace trialdb {

// False with errno saying why when a write fails (EIO for one that wrote nothing without an error).
inline bool write_fully(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = EIO;
      return false;
    }
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

}  // namespace trialdb
