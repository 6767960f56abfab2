// A library opened on first use (schema/lazy_library.h): its functions are the library's own, and a
// missing library or function is an Error (kIo) naming the library, what needs it and what failed.
#include "schema/lazy_library.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <string>

#include "schema/status.h"

using namespace trialdb;

namespace {

// zlib: linked by the tests anyway, so opening it again costs nothing.
constexpr const char* kZlibSoname = "libz.so.1";
constexpr const char* kMissingSoname = "libtrialdb_no_such_library.so.0";

std::string error_of(LazyLibrary& lib, const char* name) {
  try {
    lib.symbol(name);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kIo);
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST(LazyLibrary, ResolvesTheLibrarysOwnFunctions) {
  LazyLibrary zlib(kZlibSoname, "the test");
  auto* version = zlib.function<decltype(::zlibVersion)>("zlibVersion");
  EXPECT_EQ(std::string(version()), std::string(::zlibVersion()));
}

TEST(LazyLibrary, AMissingLibraryNamesItAndWhatNeedsIt) {
  LazyLibrary missing(kMissingSoname, "the chart part");
  const std::string what = error_of(missing, "f");
  EXPECT_NE(what.find("cannot load libtrialdb_no_such_library.so.0, which the chart part needs: "), std::string::npos)
      << what;
  EXPECT_NE(what.find("cannot open shared object file"), std::string::npos) << what;  // the loader's reason
  EXPECT_EQ(error_of(missing, "g"), what);  // every later use fails the same way
}

TEST(LazyLibrary, AMissingFunctionNamesItAndTheLibrary) {
  LazyLibrary zlib(kZlibSoname, "the test");
  const std::string what = error_of(zlib, "trialdb_no_such_function");
  EXPECT_NE(what.find("libz.so.1 has no function trialdb_no_such_function, which the test needs"), std::string::npos)
      << what;
}
