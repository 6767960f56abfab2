// libcurl opened on first S3 use (see curl_api.h).
#include "s3/curl_api.h"

#include "schema/lazy_library.h"

namespace trialdb {

namespace {

// libcurl's soname since 7.16 (2006), whichever TLS library it was built with.
constexpr const char* kLibcurlSoname = "libcurl.so.4";

CurlApi resolve() {
  static LazyLibrary libcurl(kLibcurlSoname, "S3 (s3:// locations)");
  CurlApi api{};
#define TRIALDB_CURL_RESOLVE(name) api.name = libcurl.function<decltype(::curl_##name)>("curl_" #name);
  TRIALDB_CURL_FUNCTIONS(TRIALDB_CURL_RESOLVE)
#undef TRIALDB_CURL_RESOLVE
  api.global_init(CURL_GLOBAL_DEFAULT);
  return api;
}

}  // namespace

const CurlApi& curl_api() {
  // A function-local static: resolved once, thread-safe, and tried again by the next call if it threw.
  static const CurlApi api = resolve();
  return api;
}

}  // namespace trialdb
