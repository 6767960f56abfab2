// A shared library opened by the first call that needs it instead of at process start.
//
// The dynamic loader maps and relocates every library the executable links before main() runs,
// whichever command runs, and each heavy library brings its own dependencies: libcurl alone
// brings ~20 (TLS, Kerberos, LDAP, SSH, RTMP ...), milliseconds of every `trialdb` command that
// never touches S3 (bench/README.md, "Process start-up"). A part that needs a C library keeps a
// table of the functions it calls beside it (s3/curl_api.h), resolved here on its first use; a
// part that needs a C++ library, whose classes cannot be looked up by name, is built as a module
// of its own, opened here from beside the executable through one entry point (src/cmd_serve.cc).
// Either way only the commands that use the part pay for the library.
//
// Thread-safe. The library stays loaded until the process exits. A library or function that
// cannot be found is an Error (kIo) naming the library, what needs it and the loader's reason.
#pragma once
#include <mutex>
#include <string>
#include <utility>

namespace trialdb {

class LazyLibrary {
 public:
  // file: the name the linker would record ("libcurl.so.4"), looked up as the loader looks up a
  // linked library, or a path (module_path); needed_by: what needs it, for messages ("S3 (s3://
  // locations)").
  LazyLibrary(std::string file, const char* needed_by) : file_(std::move(file)), needed_by_(needed_by) {}
  LazyLibrary(const LazyLibrary&) = delete;
  LazyLibrary& operator=(const LazyLibrary&) = delete;

  // The address of the library's function `name`, opening the library first if needed. Throws Error.
  void* symbol(const char* name);

  // The same, as a pointer to the function's type: `lib.function<decltype(::f)>("f")`.
  template <class Fn>
  Fn* function(const char* name) {
    return reinterpret_cast<Fn*>(symbol(name));
  }

 private:
  void* handle();

  const std::string file_;
  const char* needed_by_;
  std::once_flag opened_;
  void* handle_ = nullptr;
  std::string open_failure_;  // the loader's reason when handle_ stayed null
};

// The path of a module built with the executable: <the executable's folder>/../lib/<file>, the
// build tree's layout (build/bin/trialdb, build/lib/...), wherever the build tree is.
std::string module_path(const std::string& file);

}  // namespace trialdb
