// An export into a local folder (target.h): temporary name, fsync, rename; no symlink followed.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "export/target.h"
#include "schema/fd_write.h"
#include "schema/status.h"
#include "schema/temp_path.h"

namespace trialdb::exporter {

namespace {

namespace fs = std::filesystem;

Error io_error(const std::string& what, const std::string& file) {
  return Error(ErrorKind::kIo, what + ": " + std::strerror(errno), file);
}

Error symlink_error(const fs::path& p) {
  return Error(ErrorKind::kIo, "a symbolic link inside the export folder; it is not followed (remove it)", p.string());
}

// Whether `p` exists, refusing a symlink; `want_dir`: it must be a folder, else a plain file.
bool exists_unlinked(const fs::path& p, bool want_dir) {
  struct stat st;
  if (::lstat(p.c_str(), &st) != 0) {
    if (errno == ENOENT) return false;
    throw io_error("cannot inspect", p.string());
  }
  if (S_ISLNK(st.st_mode)) throw symlink_error(p);
  if (want_dir ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode))
    throw Error(ErrorKind::kIo, want_dir ? "not a folder" : "not a plain file", p.string());
  return true;
}

// The folders below the root down to `rel`'s parent, each checked not to be a symlink; created
// with the root when `create` (else: whether they all exist).
bool walk_folders(const fs::path& root, const fs::path& rel, bool create) {
  if (create) {  // the root itself is the user's: it may be a symlink
    std::error_code ec;
    fs::create_directories(root, ec);
    if (ec) throw Error(ErrorKind::kIo, "cannot create the folder: " + ec.message(), root.string());
  }
  fs::path at = root;
  for (const fs::path& part : rel.parent_path()) {
    at /= part;
    if (exists_unlinked(at, true)) continue;
    if (!create) return false;
    if (::mkdir(at.c_str(), 0755) != 0 && errno != EEXIST) throw io_error("cannot create the folder", at.string());
    exists_unlinked(at, true);
  }
  return true;
}

class LocalFile : public OutputFile {
 public:
  explicit LocalFile(fs::path final_path) : final_(std::move(final_path)), temp_(temp_path_of(final_)) {
    exists_unlinked(final_, false);
    // A temporary file left by a killed export is replaced; a symlink in its place is refused.
    if (exists_unlinked(temp_, false) && ::unlink(temp_.c_str()) != 0) throw io_error("cannot remove", temp_.string());
    fd_ = ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd_ < 0) throw io_error("cannot create", temp_.string());
  }
  ~LocalFile() override {
    if (fd_ >= 0) ::close(fd_);
    if (!committed_) ::unlink(temp_.c_str());
  }

  void write(std::string_view bytes) override {
    if (!write_fully(fd_, bytes)) throw io_error("cannot write", temp_.string());
  }

  void commit() override {
    if (::fsync(fd_) != 0) throw io_error("cannot flush", temp_.string());
    if (::close(fd_) != 0) {
      fd_ = -1;
      throw io_error("cannot close", temp_.string());
    }
    fd_ = -1;
    exists_unlinked(final_, false);
    if (::rename(temp_.c_str(), final_.c_str()) != 0) throw io_error("cannot rename into place", final_.string());
    committed_ = true;
  }

 private:
  fs::path final_, temp_;
  int fd_ = -1;
  bool committed_ = false;
};

}  // namespace

LocalTarget::LocalTarget(std::string root) : root_(std::move(root)) {}

std::unique_ptr<OutputFile> LocalTarget::create(const std::string& path) {
  walk_folders(root_, path, true);
  return std::make_unique<LocalFile>(fs::path(root_) / path);
}

std::optional<std::string> LocalTarget::read(const std::string& path) {
  const fs::path p = fs::path(root_) / path;
  if (!walk_folders(root_, path, false) || !exists_unlinked(p, false)) return std::nullopt;
  const int fd = ::open(p.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ELOOP) throw symlink_error(p);
    throw io_error("cannot read", p.string());
  }
  std::string out;
  char buffer[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      ::close(fd);
      throw io_error("cannot read", p.string());
    }
    if (n == 0) break;
    out.append(buffer, static_cast<size_t>(n));
  }
  ::close(fd);
  return out;
}

void LocalTarget::remove(const std::string& path) {
  const fs::path p = fs::path(root_) / path;
  if (!walk_folders(root_, path, false) || !exists_unlinked(p, false)) return;
  if (::unlink(p.c_str()) != 0 && errno != ENOENT) throw io_error("cannot remove", p.string());
}

std::vector<std::string> LocalTarget::list(const std::string& folder) {
  const fs::path dir = fs::path(root_) / folder;
  std::vector<std::string> names;
  if (!walk_folders(root_, fs::path(folder) / "x", false) || !exists_unlinked(dir, true)) return names;
  DIR* d = ::opendir(dir.c_str());
  if (!d) throw io_error("cannot list", dir.string());
  while (const dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name != "." && name != "..") names.push_back(name);
  }
  ::closedir(d);
  return names;
}

std::string LocalTarget::describe(const std::string& path) const { return (fs::path(root_) / path).string(); }

}  // namespace trialdb::exporter
