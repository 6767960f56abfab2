// A shared library opened on first use (see lazy_library.h).
#include "schema/lazy_library.h"

#include <dlfcn.h>

#include <filesystem>

#include "schema/status.h"

namespace trialdb {

void* LazyLibrary::symbol(const char* name) {
  void* lib = handle();
  dlerror();  // clear any earlier failure, so the one read below is this lookup's
  void* address = dlsym(lib, name);
  if (address == nullptr) {
    const char* why = dlerror();
    throw Error(ErrorKind::kIo,
                file_ + " has no function " + name + ", which " + needed_by_ +
                    " needs (a version older than the one trialdb was built with?): " + (why ? why : "null address"));
  }
  return address;
}

void* LazyLibrary::handle() {
  std::call_once(opened_, [this] {
    // RTLD_LOCAL: its symbols serve only the lookups above, never another library's.
    handle_ = dlopen(file_.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle_ == nullptr) {
      const char* why = dlerror();
      open_failure_ = why ? why : "unknown reason";
    }
  });
  if (handle_ == nullptr)
    throw Error(ErrorKind::kIo, "cannot load " + file_ + ", which " + needed_by_ + " needs: " + open_failure_);
  return handle_;
}

std::string module_path(const std::string& file) {
  std::error_code ec;
  const std::filesystem::path executable = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) throw Error(ErrorKind::kIo, "cannot find the trialdb executable (/proc/self/exe): " + ec.message());
  return (executable.parent_path().parent_path() / "lib" / file).string();
}

}  // namespace trialdb
