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
#include "schema/temp_path.h"

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

bool write_all(int fd, const std::string& bytes) {
  for (size_t done = 0; done < bytes.size();) {
    const ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

// Moves temp to path unless something is at path. False (temp left) when it did not.
bool rename_no_replace(const std::string& temp, const std::string& path) {
  if (renameat2(AT_FDCWD, temp.c_str(), AT_FDCWD, path.c_str(), RENAME_NOREPLACE) == 0) return true;
  if (errno != EINVAL && errno != ENOSYS) return false;
  // A file system without RENAME_NOREPLACE: a hard link also fails when path exists.
  if (link(temp.c_str(), path.c_str()) != 0) return false;
  unlink(temp.c_str());
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
    db.exec("PRAGMA journal_mode=DELETE");
  }
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
  // Written whole beside it first, so that no other process opens a part of it.
  const std::string temp = temp_path_of(path).string();
  const int fd = open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) return false;  // another process is making it, or a folder we cannot write to
  const bool written = write_all(fd, bytes) && fdatasync(fd) == 0;
  if (close(fd) == 0 && written && rename_no_replace(temp, path)) return true;
  unlink(temp.c_str());
  return false;
}

}  // namespace trialdb
