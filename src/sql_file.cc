// sql_file.h: SQL files, bounded.
#include "src/sql_file.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "schema/status.h"

namespace trialdb::cli {

namespace {

std::string too_large(const std::string& option, const std::string& what) {
  return option + " " + what + ": larger than " + std::to_string(kMaxSqlFileBytes >> 20) +
         " MiB, which no SQL file is (is it the right file?)";
}

// Up to kMaxSqlFileBytes + 1 bytes of `in`, so that one byte more than the limit is seen.
std::string read_bounded(std::FILE* in, const std::string& option, const std::string& what) {
  std::string text;
  char buf[1 << 16];
  while (text.size() <= kMaxSqlFileBytes) {
    const size_t n = std::fread(buf, 1, sizeof buf, in);
    text.append(buf, n);
    if (n < sizeof buf) break;
  }
  if (std::ferror(in)) throw Error(Status::io(option + ": cannot read: " + std::strerror(errno)).at(what));
  if (text.size() > kMaxSqlFileBytes) throw Error(ErrorKind::kUsage, too_large(option, what));
  return text;
}

}  // namespace

std::string read_sql_file(const std::string& path, const std::string& option) {
  if (path == "-") return read_bounded(stdin, option, "standard input");
  struct stat st {};
  if (stat(path.c_str(), &st) != 0)
    throw Error(Status::io(option + ": cannot read the file: " + std::strerror(errno)).at(path));
  // Checked before opening: opening a FIFO waits for a writer.
  if (!S_ISREG(st.st_mode))
    throw Error(ErrorKind::kUsage, option + " " + path +
                                       ": not a regular file (a FIFO, a device or a folder); give a file "
                                       "of SQL, or - for standard input");
  if (static_cast<uint64_t>(st.st_size) > kMaxSqlFileBytes) throw Error(ErrorKind::kUsage, too_large(option, path));
  std::FILE* in = std::fopen(path.c_str(), "rb");
  if (!in) throw Error(Status::io(option + ": cannot read the file: " + std::strerror(errno)).at(path));
  try {
    std::string text = read_bounded(in, option, path);
    std::fclose(in);
    return text;
  } catch (...) {
    std::fclose(in);
    throw;
  }
}

}  // namespace trialdb::cli
