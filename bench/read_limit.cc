// The read limit: a tight loop that only reads every file of a trial (index, event and
// collections files) into one reused buffer, no parsing. Ingest throughput is reported as a
// fraction of this, measured in the same run on the same files with the same cache state.
//
//   read_limit TRIAL_DIR [--repeat N]     prints: files=.. bytes=.. seconds=.. (best of N)
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: read_limit TRIAL_DIR [--repeat N]\n");
    return 2;
  }
  int repeat = 3;
  for (int i = 2; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], "--repeat") == 0) repeat = std::max(1, std::atoi(argv[i + 1]));
  std::vector<std::string> files;
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(argv[1], ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec))
    if (it->is_regular_file()) files.push_back(it->path().string());
  if (ec || files.empty()) {
    std::fprintf(stderr, "read_limit: %s: no files (%s)\n", argv[1], ec ? ec.message().c_str() : "empty");
    return 1;
  }
  std::vector<char> buf(4 << 20);
  double best = 1e300;
  uint64_t bytes = 0;
  for (int r = 0; r < repeat; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    bytes = 0;
    for (const auto& f : files) {
      int fd = open(f.c_str(), O_RDONLY);
      if (fd < 0) {
        std::fprintf(stderr, "read_limit: cannot open %s: %s\n", f.c_str(), std::strerror(errno));
        return 1;
      }
      ssize_t n;
      while ((n = read(fd, buf.data(), buf.size())) > 0) bytes += static_cast<uint64_t>(n);
      close(fd);
    }
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (s < best) best = s;
  }
  std::printf("files=%zu bytes=%llu seconds=%.6f\n", files.size(), static_cast<unsigned long long>(bytes), best);
  return 0;
}
