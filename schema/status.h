// The one error convention of trialdb: a Status says whether something worked and, if not, what
// kind of failure it was, where (file, step) and why. Functions that can fail on bad input return
// a Status (the parsers, the decoders, the regex compiler), their results going through pointer
// arguments; code that cannot continue throws an Error, which carries a Status. Printed, both
// read "<file> (step N): <cause>", the form of every message a user sees (stderr and the
// ingest_errors view).
//
// Which kind, by example: a malformed index file or event record is kInvalidInput; a record
// that runs past the bytes written so far is kIncomplete; an unreadable file, an unreachable or
// refusing S3 is kIo; any SQLite failure (Database, Statement) is kDatabase; a bad option is
// kUsage. The command line maps kinds to exit codes (README "Exit codes").
#pragma once
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>

namespace trialdb {

enum class ErrorKind {
  kOk,
  kInvalidInput,  // the data is malformed (a file, a blob, an argument to an SQL function)
  kIncomplete,    // the data ends early: a live job may still be writing it
  kIo,            // a file or object cannot be read or written
  kDatabase,      // SQLite failed (Error::sqlite_code has its extended result code)
  kUsage,         // the command line asks for something impossible
};

class [[nodiscard]] Status {
 public:
  Status() = default;  // OK
  static Status ok() { return Status(); }
  static Status invalid(std::string cause) { return Status(ErrorKind::kInvalidInput, std::move(cause)); }
  static Status incomplete(std::string cause) { return Status(ErrorKind::kIncomplete, std::move(cause)); }
  static Status io(std::string cause) { return Status(ErrorKind::kIo, std::move(cause)); }
  static Status usage(std::string cause) { return Status(ErrorKind::kUsage, std::move(cause)); }
  static Status database(std::string cause) { return Status(ErrorKind::kDatabase, std::move(cause)); }

  Status(ErrorKind kind, std::string cause, std::string file = {}, int64_t step = kNoStep)
      : kind_(kind), cause_(std::move(cause)), file_(std::move(file)), step_(step) {}

  bool is_ok() const { return kind_ == ErrorKind::kOk; }
  ErrorKind kind() const { return kind_; }
  const std::string& cause() const { return cause_; }
  const std::string& file() const { return file_; }
  int64_t step() const { return step_; }  // kNoStep: not tied to a step

  // The same failure, said of a file (and step): where a parser's error happened.
  Status at(std::string file, int64_t step = kNoStep) const { return Status(kind_, cause_, std::move(file), step); }
  // The same failure with context before its cause ("tensor 'w': " + cause), file and step kept.
  Status prefixed(const std::string& context) const { return Status(kind_, context + cause_, file_, step_); }

  // "<file> (step N): <cause>", leaving out what is not known.
  std::string to_string() const;

  static constexpr int64_t kNoStep = -1;

 private:
  ErrorKind kind_ = ErrorKind::kOk;
  std::string cause_;
  std::string file_;
  int64_t step_ = kNoStep;
};

// Thrown where the work cannot go on, with a failed Status. what() is status().to_string().
// Callers tell failures apart by kind() (and SQLite's busy/locked by sqlite_code()), never by
// the message.
class Error : public std::runtime_error {
 public:
  explicit Error(Status status, int sqlite_code = 0)
      : std::runtime_error(status.to_string()), status_(std::move(status)), sqlite_code_(sqlite_code) {}
  Error(ErrorKind kind, std::string cause, std::string file = {}, int64_t step = Status::kNoStep)
      : Error(Status(kind, std::move(cause), std::move(file), step)) {}

  const Status& status() const { return status_; }
  ErrorKind kind() const { return status_.kind(); }
  int sqlite_code() const { return sqlite_code_; }  // SQLite's extended result code, or 0

 private:
  Status status_;
  int sqlite_code_;
};

inline std::string Status::to_string() const {
  std::string s = file_;
  if (step_ != kNoStep) s += (s.empty() ? "step " : " (step ") + std::to_string(step_) + (s.empty() ? "" : ")");
  return s.empty() ? cause_ : s + ": " + cause_;
}

}  // namespace trialdb
