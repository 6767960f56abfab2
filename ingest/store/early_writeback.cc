#include "ingest/store/early_writeback.h"

#include <chrono>
#include <cstdlib>

#ifdef __linux__
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#endif

namespace trialdb {

namespace {
constexpr auto kInterval = std::chrono::milliseconds(20);

#ifdef __linux__
// A descriptor this process has open on the file at path (the same inode), or -1.
int find_open_descriptor(const char* path) {
  struct stat want;
  if (::stat(path, &want) != 0) return -1;
  DIR* dir = ::opendir("/proc/self/fd");
  if (!dir) return -1;
  int found = -1;
  const int own = ::dirfd(dir);
  while (struct dirent* e = ::readdir(dir)) {
    char* end = nullptr;
    long fd = std::strtol(e->d_name, &end, 10);
    if (end == e->d_name || *end || fd == own) continue;
    struct stat st;
    if (::fstat(static_cast<int>(fd), &st) == 0 && S_ISREG(st.st_mode) && st.st_dev == want.st_dev &&
        st.st_ino == want.st_ino) {
      found = static_cast<int>(fd);
      break;
    }
  }
  ::closedir(dir);
  return found;
}
#endif
}  // namespace

EarlyWriteback::EarlyWriteback(Database& db) {
#ifdef __linux__
  const char* file = sqlite3_db_filename(db.handle(), "main");
  if (!file || !*file) return;
  fd_ = find_open_descriptor(file);
  if (fd_ >= 0) thread_ = std::thread([this] { run(); });
#else
  (void)db;
#endif
}

EarlyWriteback::~EarlyWriteback() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void EarlyWriteback::run() {
#ifdef __linux__
  std::unique_lock<std::mutex> lock(mu_);
  while (!cv_.wait_for(lock, kInterval, [&] { return stop_; })) {
    lock.unlock();
    // Errors are not ours to report: the commit's own fsync sees the same ones.
    ::sync_file_range(fd_, 0, 0, SYNC_FILE_RANGE_WRITE);
    lock.lock();
  }
#endif
}

}  // namespace trialdb
