// The read limit: a tight loop that only reads every file of a trial (index, event and
// collections files) into one reused buffer, no parsing. Ingest throughput is reported as a
// fraction of this, measured in the same run on the same files with the same cache state.
//
//   read_limit TRIAL_DIR [--repeat N] [--cold] [--copy-to FILE] [--evict-only]
//     prints: files=.. bytes=.. seconds=.. (best of N)
//   --cold        before every pass, flush the files and drop them from the page cache
//                 (fdatasync + POSIX_FADV_DONTNEED: no root needed), so the pass reads the device
//   --copy-to F   also write every byte read to F (starting its write-back every 16 MiB) and
//                 fdatasync it at the end: the store limit, what any tool that keeps one copy of
//                 the trial must at least spend
//   --evict-only  only drop the files from the page cache (bench/run calls it before a cold ingest)
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

namespace {

bool evict(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY);
  if (fd < 0) return false;
  fdatasync(fd);  // dirty pages cannot be dropped
  int rc = posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  close(fd);
  return rc == 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: read_limit TRIAL_DIR [--repeat N] [--cold] [--copy-to FILE] [--evict-only]\n");
    return 2;
  }
  int repeat = 3;
  bool cold = false, evict_only = false;
  std::string copy_to;
  for (int i = 2; i < argc; ++i) {
    if (std::strcmp(argv[i], "--repeat") == 0 && i + 1 < argc) repeat = std::max(1, std::atoi(argv[++i]));
    else if (std::strcmp(argv[i], "--cold") == 0) cold = true;
    else if (std::strcmp(argv[i], "--evict-only") == 0) evict_only = true;
    else if (std::strcmp(argv[i], "--copy-to") == 0 && i + 1 < argc) copy_to = argv[++i];
    else {
      std::fprintf(stderr, "read_limit: unknown argument %s\n", argv[i]);
      return 2;
    }
  }
  std::vector<std::string> files;
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(argv[1], ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec))
    if (it->is_regular_file()) files.push_back(it->path().string());
  if (ec || files.empty()) {
    std::fprintf(stderr, "read_limit: %s: no files (%s)\n", argv[1], ec ? ec.message().c_str() : "empty");
    return 1;
  }
  if (evict_only) {
    size_t failed = 0;
    for (const auto& f : files) failed += !evict(f);
    std::printf("files=%zu evicted=%zu\n", files.size(), files.size() - failed);
    return failed ? 1 : 0;
  }
  std::vector<char> buf(4 << 20);
  double best = 1e300;
  uint64_t bytes = 0;
  for (int r = 0; r < repeat; ++r) {
    if (cold)
      for (const auto& f : files) evict(f);
    int out = -1;
    if (!copy_to.empty()) {
      out = open(copy_to.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (out < 0) {
        std::fprintf(stderr, "read_limit: cannot create %s: %s\n", copy_to.c_str(), std::strerror(errno));
        return 1;
      }
    }
    auto t0 = std::chrono::steady_clock::now();
    bytes = 0;
    uint64_t written_back = 0;
    for (const auto& f : files) {
      int fd = open(f.c_str(), O_RDONLY);
      if (fd < 0) {
        std::fprintf(stderr, "read_limit: cannot open %s: %s\n", f.c_str(), std::strerror(errno));
        return 1;
      }
      ssize_t n;
      while ((n = read(fd, buf.data(), buf.size())) > 0) {
        bytes += static_cast<uint64_t>(n);
        if (out >= 0 && write(out, buf.data(), static_cast<size_t>(n)) != n) {
          std::fprintf(stderr, "read_limit: writing %s: %s\n", copy_to.c_str(), std::strerror(errno));
          return 1;
        }
        // Start the device writing every 16 MiB, as the ingest's bulk load does (EarlyWriteback),
        // so the final fdatasync finds little left and the copy is a limit the ingest cannot beat.
        if (out >= 0 && bytes - written_back >= (16u << 20)) {
          sync_file_range(out, static_cast<off_t>(written_back), static_cast<off_t>(bytes - written_back),
                          SYNC_FILE_RANGE_WRITE);
          written_back = bytes;
        }
      }
      close(fd);
    }
    if (out >= 0) {
      fdatasync(out);
      close(out);
    }
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (s < best) best = s;
    if (out >= 0) unlink(copy_to.c_str());
  }
  std::printf("files=%zu bytes=%llu seconds=%.6f\n", files.size(), static_cast<unsigned long long>(bytes), best);
  return 0;
}
