// SQL read from a file the command line names (sql --file, sql -, --rule-file): only a regular
// file or standard input, and at most kMaxSqlFileBytes of it, so that a FIFO nobody writes,
// /dev/zero or a runaway pipe can neither hang a command nor fill its memory.
#pragma once
#include <cstddef>
#include <string>

namespace trialdb::cli {

// Far more than any query or rule file (the built-in rules are a few KiB each).
inline constexpr size_t kMaxSqlFileBytes = 16u << 20;

// The text of `path` ("-": standard input, read up to the limit). Throws Error naming `option`
// and the file: kUsage for something that is not a regular file (a FIFO, a device, a folder) or
// is larger than kMaxSqlFileBytes, kIo for a file that cannot be read.
std::string read_sql_file(const std::string& path, const std::string& option);

}  // namespace trialdb::cli
