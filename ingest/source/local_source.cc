// A trial in a local folder: listings that report what they cannot offer, and reads of regular
// files only (local_source.h).
#include "ingest/source/local_source.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <set>
#include <utility>

namespace trialdb {

namespace {

// Never blocks in open (a FIFO with no writer) and never makes a terminal ours.
constexpr int kOpenFlags = O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY;

// Why a path could not be opened: kInvalidInput when no later attempt can succeed without the
// trial's layout changing, kIo when one may (permissions, I/O errors, too many open files).
Status open_failure(int err) {
  switch (err) {
    case ENOTDIR:
    case ENAMETOOLONG:
    case ELOOP:
    case EISDIR:
    case ENXIO:
    case ENODEV: return Status::invalid(std::strerror(err));
    default: return Status::io(std::strerror(err));
  }
}

Status not_regular(mode_t mode) {
  const char* what = S_ISDIR(mode)    ? "a folder"
                     : S_ISFIFO(mode) ? "a FIFO"
                     : S_ISCHR(mode)  ? "a character device"
                     : S_ISBLK(mode)  ? "a block device"
                     : S_ISSOCK(mode) ? "a socket"
                                      : "of an unknown type";
  return Status::invalid(std::string("not a regular file (") + what + ")");
}

Status dangling_symlink() { return Status::io("a dangling symlink (its target does not exist)"); }
Status outside_symlink() { return Status::invalid("a symlink that leads outside the trial folder"); }

// The resolved form of an existing path, "" when it cannot be resolved.
std::string resolved(const std::string& path) {
  char buf[PATH_MAX];
  return ::realpath(path.c_str(), buf) ? std::string(buf) : std::string();
}

// Depth-first in sorted order, skipping whole subtrees that sort before start_after, and stopping
// once `limit` entries are out. A folder already listed (by its device and inode) is not entered
// again: a symlink cycle, or a link to a folder whose files are listed under their own path.
class LocalWalk {
 public:
  LocalWalk(const std::string& root, const std::string& start_after, size_t limit,
            std::function<bool(const std::string&)> inside, std::vector<SourceFile>* out)
      : root_(root), start_after_(start_after), limit_(limit), inside_(std::move(inside)), out_(out) {}

  void folder(const std::string& rel) {
    const std::string path = rel.empty() ? root_ : root_ + "/" + rel;
    DIR* d = ::opendir(path.c_str());
    if (!d) {
      if (errno != ENOENT) out_->push_back({rel + "/", 0, open_failure(errno).prefixed("cannot list the folder: ")});
      return;
    }
    struct stat self;
    if (::fstat(::dirfd(d), &self) == 0) visited_.insert({self.st_dev, self.st_ino});
    std::vector<std::string> names;
    while (dirent* e = ::readdir(d)) {
      if (std::strcmp(e->d_name, ".") && std::strcmp(e->d_name, "..")) names.emplace_back(e->d_name);
    }
    ::closedir(d);
    std::sort(names.begin(), names.end());
    for (const auto& n : names) {
      if (out_->size() >= limit_) return;
      entry(rel.empty() ? n : rel + "/" + n);
    }
  }

 private:
  void entry(const std::string& child) {
    const std::string path = root_ + "/" + child;
    const bool after = start_after_.empty() || child > start_after_;
    struct stat st;
    if (::lstat(path.c_str(), &st) != 0) return;  // vanished meanwhile
    if (S_ISLNK(st.st_mode)) {
      if (::stat(path.c_str(), &st) != 0) {
        if (after) out_->push_back({child, 0, errno == ENOENT ? dangling_symlink() : open_failure(errno)});
        return;
      }
      if (!inside_(child)) {
        if (after) out_->push_back({child, 0, outside_symlink()});
        return;
      }
    }
    if (S_ISDIR(st.st_mode)) {
      if (visited_.count({st.st_dev, st.st_ino})) return;
      const std::string as_prefix = child + "/";
      if (!start_after_.empty() && as_prefix < start_after_ &&
          start_after_.compare(0, as_prefix.size(), as_prefix) != 0)
        return;
      folder(child);
    } else if (after) {
      if (S_ISREG(st.st_mode)) out_->push_back({child, static_cast<uint64_t>(st.st_size), Status()});
      else out_->push_back({child, 0, not_regular(st.st_mode)});
    }
  }

  const std::string& root_;
  const std::string& start_after_;
  const size_t limit_;
  std::function<bool(const std::string&)> inside_;  // whether a symlinked path stays in the trial
  std::vector<SourceFile>* out_;
  std::set<std::pair<dev_t, ino_t>> visited_;
};

}  // namespace

LocalSource::LocalSource(std::string root) : root_(std::move(root)) {
  while (root_.size() > 1 && root_.back() == '/') root_.pop_back();
  struct stat st;
  if (::stat(root_.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    throw Error(Status::io("not a directory (expected a trial folder)").at(root_));
  real_root_ = resolved(root_);
  if (real_root_.empty()) throw Error(Status::io(std::strerror(errno)).at(root_));
}

bool LocalSource::inside(const std::string& rel) const {
  const std::string r = resolved(full(rel));
  if (real_root_ == "/") return !r.empty();
  return r.size() > real_root_.size() && r.compare(0, real_root_.size(), real_root_) == 0 &&
         r[real_root_.size()] == '/';
}

std::vector<SourceFile> LocalSource::list(const std::string& prefix, const std::string& start_after, size_t limit) {
  std::vector<SourceFile> out;
  if (limit == 0) return out;
  std::string rel = prefix;
  while (!rel.empty() && rel.back() == '/') rel.pop_back();
  struct stat st;
  if (!rel.empty() && ::lstat(full(rel).c_str(), &st) == 0 && S_ISLNK(st.st_mode) &&
      ::stat(full(rel).c_str(), &st) == 0 && !inside(rel)) {
    out.push_back({rel + "/", 0, outside_symlink()});
    return out;
  }
  LocalWalk walk(
      root_, start_after, limit, [this](const std::string& child) { return inside(child); }, &out);
  walk.folder(rel);
  return out;
}

Status LocalSource::open_regular(const std::string& rel, int* fd_out, uint64_t* size) const {
  *fd_out = -1;
  const std::string path = full(rel);
  const int fd = ::open(path.c_str(), kOpenFlags);
  struct stat st;
  if (fd < 0) {
    const int err = errno;
    if (err != ENOENT) return open_failure(err).at(path);
    if (::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) return dangling_symlink().at(path);
    return Status();
  }
  Status problem;
  if (::fstat(fd, &st) != 0) problem = Status::io(std::strerror(errno));
  else if (!S_ISREG(st.st_mode)) problem = not_regular(st.st_mode);
  else if (!inside(rel)) problem = outside_symlink();
  if (!problem.is_ok()) {
    ::close(fd);
    return problem.at(path);
  }
  *fd_out = fd;
  *size = static_cast<uint64_t>(st.st_size);
  return Status();
}

Status LocalSource::read(const std::string& path, std::optional<ReadBuffer>* out) {
  return read_range(path, 0, UINT64_MAX, out);
}

Status LocalSource::read_range(const std::string& path, uint64_t offset, uint64_t length,
                               std::optional<ReadBuffer>* out) {
  out->reset();
  uint64_t size = 0;
  int fd = -1;
  if (Status st = open_regular(path, &fd, &size); !st.is_ok() || fd < 0) return st;
  const uint64_t n = offset >= size ? 0 : std::min(length, size - offset);  // never allocate past the file
  ReadBuffer buf(n);
  uint64_t got = 0;
  int err = 0;
  while (got < n) {
    ssize_t r = ::pread(fd, buf.data() + got, n - got, static_cast<off_t>(offset + got));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) err = errno;
    if (r <= 0) break;
    got += static_cast<uint64_t>(r);
  }
  ::close(fd);
  if (err) return Status::io(std::strerror(err)).at(full(path));
  buf.truncate(got);
  *out = std::move(buf);
  return Status();
}

Status LocalSource::map_range(const std::string& path, uint64_t offset, uint64_t length,
                              std::unique_ptr<MappedRange>* out) {
  out->reset();
  uint64_t size = 0;
  int fd = -1;
  if (Status st = open_regular(path, &fd, &size); !st.is_ok() || fd < 0) return st;
  *out = MappedRange::map(fd, offset, length, size);
  ::close(fd);  // the mapping keeps the file
  return Status();
}

bool LocalSource::exists(const std::string& path) {
  struct stat st;
  return ::stat(full(path).c_str(), &st) == 0;
}

}  // namespace trialdb
