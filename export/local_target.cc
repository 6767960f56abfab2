// An export into a local folder (target.h): temporary name, fsync, rename.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "export/target.h"
#include "schema/status.h"

namespace trialdb::exporter {

namespace {

namespace fs = std::filesystem;

Error io_error(const std::string& what, const std::string& file) {
  return Error(ErrorKind::kIo, what + ": " + std::strerror(errno), file);
}

// ".<name>.tmp" beside the file. Appended rather than `"." + name + ".tmp"`, which GCC 12 at -O3
// warns about (-Wrestrict through basic_string::_M_replace, GCC bug 105329).
fs::path temp_path_of(const fs::path& final_path) {
  std::string name(1, '.');
  name += final_path.filename().string();
  name += ".tmp";
  return final_path.parent_path() / name;
}

class LocalFile : public OutputFile {
 public:
  explicit LocalFile(fs::path final_path) : final_(std::move(final_path)), temp_(temp_path_of(final_)) {
    std::error_code ec;
    fs::create_directories(final_.parent_path(), ec);
    if (ec) throw Error(ErrorKind::kIo, "cannot create the folder: " + ec.message(), final_.parent_path().string());
    fd_ = ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd_ < 0) throw io_error("cannot create", temp_.string());
  }
  ~LocalFile() override {
    if (fd_ >= 0) ::close(fd_);
    if (!committed_) ::unlink(temp_.c_str());
  }

  void write(std::string_view bytes) override {
    while (!bytes.empty()) {
      const ssize_t n = ::write(fd_, bytes.data(), bytes.size());
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) throw io_error("cannot write", temp_.string());
      bytes.remove_prefix(static_cast<size_t>(n));
    }
  }

  void commit() override {
    if (::fsync(fd_) != 0) throw io_error("cannot flush", temp_.string());
    if (::close(fd_) != 0) {
      fd_ = -1;
      throw io_error("cannot close", temp_.string());
    }
    fd_ = -1;
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
  return std::make_unique<LocalFile>(fs::path(root_) / path);
}

std::optional<std::string> LocalTarget::read(const std::string& path) {
  const fs::path p = fs::path(root_) / path;
  std::ifstream in(p, std::ios::binary);
  if (!in) {
    if (errno == ENOENT) return std::nullopt;
    throw io_error("cannot read", p.string());
  }
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void LocalTarget::remove(const std::string& path) {
  const fs::path p = fs::path(root_) / path;
  if (::unlink(p.c_str()) != 0 && errno != ENOENT) throw io_error("cannot remove", p.string());
}

std::string LocalTarget::describe(const std::string& path) const { return (fs::path(root_) / path).string(); }

}  // namespace trialdb::exporter
