#include "ingest/source/local_source.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace trialdb {

LocalSource::LocalSource(std::string root) : root_(std::move(root)) {
  while (root_.size() > 1 && root_.back() == '/') root_.pop_back();
  struct stat st;
  if (::stat(root_.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    throw Error(Status::io("not a directory (expected a trial folder)").at(root_));
}

namespace {
// Depth-first in sorted order, skipping whole subtrees that sort before start_after.
void walk(const std::string& root, const std::string& rel, const std::string& start_after,
          std::vector<SourceFile>* out) {
  std::string dir = rel.empty() ? root : root + "/" + rel;
  DIR* d = ::opendir(dir.c_str());
  if (!d) return;
  std::vector<std::string> names;
  while (dirent* e = ::readdir(d)) {
    if (std::strcmp(e->d_name, ".") && std::strcmp(e->d_name, "..")) names.emplace_back(e->d_name);
  }
  ::closedir(d);
  std::sort(names.begin(), names.end());
  for (const auto& n : names) {
    std::string child = rel.empty() ? n : rel + "/" + n;
    struct stat st;
    if (::stat((root + "/" + child).c_str(), &st) != 0) continue;  // vanished meanwhile
    if (S_ISDIR(st.st_mode)) {
      std::string as_prefix = child + "/";
      if (!start_after.empty() && as_prefix < start_after && start_after.compare(0, as_prefix.size(), as_prefix) != 0)
        continue;
      walk(root, child, start_after, out);
    } else if (S_ISREG(st.st_mode)) {
      if (start_after.empty() || child > start_after) out->push_back({child, static_cast<uint64_t>(st.st_size)});
    }
  }
}
}  // namespace

std::vector<SourceFile> LocalSource::list(const std::string& prefix, const std::string& start_after) {
  std::vector<SourceFile> out;
  std::string rel = prefix;
  while (!rel.empty() && rel.back() == '/') rel.pop_back();
  walk(root_, rel, start_after, &out);
  return out;
}

std::optional<std::string> LocalSource::read(const std::string& path) {
  return read_range(path, 0, UINT64_MAX);
}

std::optional<std::string> LocalSource::read_range(const std::string& path, uint64_t offset, uint64_t length) {
  int fd = ::open(full(path).c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return std::nullopt;
    throw Error(Status::io(std::strerror(errno)).at(full(path)));
  }
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    int e = errno;
    ::close(fd);
    throw Error(Status::io(std::strerror(e)).at(full(path)));
  }
  uint64_t size = static_cast<uint64_t>(st.st_size);
  uint64_t n = offset >= size ? 0 : std::min(length, size - offset);  // never allocate past the file
  std::string buf(n, '\0');
  uint64_t got = 0;
  while (got < n) {
    ssize_t r = ::pread(fd, buf.data() + got, n - got, static_cast<off_t>(offset + got));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    got += static_cast<uint64_t>(r);
  }
  ::close(fd);
  buf.resize(got);
  return buf;
}

std::unique_ptr<MappedRange> LocalSource::map_range(const std::string& path, uint64_t offset, uint64_t length) {
  int fd = ::open(full(path).c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return nullptr;
  struct stat st;
  std::unique_ptr<MappedRange> r;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) r = MappedRange::map(fd, offset, length, static_cast<uint64_t>(st.st_size));
  ::close(fd);   // the mapping keeps the file
  return r;
}

bool LocalSource::exists(const std::string& path) {
  struct stat st;
  return ::stat(full(path).c_str(), &st) == 0;
}

}  // namespace trialdb
