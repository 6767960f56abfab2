// Making a new database's image and creating a file from one (new_file_image.h).
#include "schema/new_file_image.h"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "schema/database.h"
#include "schema/fd_write.h"

namespace trialdb {

namespace {

constexpr const char* kJournalSuffixes[] = {"-wal", "-journal", "-shm"};

void remove_database_files(const std::string& path) {
  std::error_code ec;
  std::filesystem::remove(path, ec);
  for (const char* suffix : kJournalSuffixes) std::filesystem::remove(path + suffix, ec);
}

bool nothing_at(const std::string& path) {
  struct stat st;
  return lstat(path.c_str(), &st) != 0 && errno == ENOENT;
}

// 16 random bytes as 32 lowercase hex digits, as schema.sql's lower(hex(randomblob(16))).
bool random_uid(char out[kUidChars]) {
  unsigned char raw[kUidChars / 2];
  if (getrandom(raw, sizeof raw, 0) != static_cast<ssize_t>(sizeof raw)) return false;
  static constexpr char kHex[] = "0123456789abcdef";
  for (size_t i = 0; i < sizeof raw; ++i) {
    out[2 * i] = kHex[raw[i] >> 4];
    out[2 * i + 1] = kHex[raw[i] & 0xF];
  }
  return true;
}

}  // namespace

MadeImage make_new_file_image(int page_size, const std::string& scratch_dir) {
  const std::string path = scratch_dir + "/new-" + std::to_string(page_size) + ".db";
  remove_database_files(path);
  std::string uid;
  {
    Database db(path, OpenMode::kCreate, nullptr, {}, page_size);
    {
      Statement q(db.handle(), "SELECT uid FROM database_identity");
      if (q.step()) uid = q.text(0);
    }
    // The same length: SQLite rewrites the row in place, so the random uid leaves no trace.
    db.exec(std::string("UPDATE database_identity SET uid = '") + kUidPlaceholder + "'");
  }  // closing checkpoints the WAL into the file and removes it
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  in.close();
  remove_database_files(path);
  const std::string file = bytes.str();
  const size_t at = file.find(kUidPlaceholder);
  if (uid.size() != kUidChars || at == std::string::npos || file.find(kUidPlaceholder, at + 1) != std::string::npos ||
      file.find(uid) != std::string::npos)
    throw Error(ErrorKind::kDatabase, "the new database's uid is not in one place of its file", path);
  MadeImage made{std::string(ZSTD_compressBound(file.size()), '\0'), file.size(), at};
  const size_t compressed =
      ZSTD_compress(made.compressed.data(), made.compressed.size(), file.data(), file.size(), ZSTD_maxCLevel());
  if (ZSTD_isError(compressed)) throw Error(ErrorKind::kDatabase, "zstd cannot compress the new database", path);
  made.compressed.resize(compressed);
  return made;
}

bool create_from_image(const std::string& path, const NewFileImage& image) {
  if (!nothing_at(path)) return false;
  for (const char* suffix : kJournalSuffixes)
    if (!nothing_at(path + suffix)) return false;  // SQLite would take them for this file's
  std::string bytes(image.bytes, '\0');
  if (ZSTD_decompress(bytes.data(), bytes.size(), image.compressed, image.compressed_bytes) != image.bytes ||
      image.uid_offset > bytes.size() - kUidChars || bytes.compare(image.uid_offset, kUidChars, kUidPlaceholder) != 0 ||
      !random_uid(bytes.data() + image.uid_offset))
    return false;
  // Written whole into an unnamed file of the folder, then given its name by a link, which fails
  // if anything took the name meanwhile: no other process sees a part of it, and a crash leaves
  // nothing behind.
  const std::filesystem::path folder = std::filesystem::path(path).parent_path();
  const int fd = open(folder.empty() ? "." : folder.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0644);
  if (fd < 0) return false;  // a folder we cannot write to, or a file system without O_TMPFILE
  char self[32];             // its name in /proc, which linkat takes without CAP_DAC_READ_SEARCH
  std::snprintf(self, sizeof self, "/proc/self/fd/%d", fd);
  const bool created = write_fully(fd, bytes) && fdatasync(fd) == 0 &&
                       linkat(AT_FDCWD, self, AT_FDCWD, path.c_str(), AT_SYMLINK_FOLLOW) == 0;
  close(fd);
  return created;
}

}  // namespace trialdb
