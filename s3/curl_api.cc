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
#define TRIALDB_CURL_FUNCTION(field, name) api.field = libcurl.function<decltype(::name)>(#name)
  TRIALDB_CURL_FUNCTION(global_init, curl_global_init);
  TRIALDB_CURL_FUNCTION(easy_init, curl_easy_init);
  TRIALDB_CURL_FUNCTION(easy_reset, curl_easy_reset);
  TRIALDB_CURL_FUNCTION(easy_cleanup, curl_easy_cleanup);
  TRIALDB_CURL_FUNCTION(easy_setopt, curl_easy_setopt);
  TRIALDB_CURL_FUNCTION(easy_getinfo, curl_easy_getinfo);
  TRIALDB_CURL_FUNCTION(easy_strerror, curl_easy_strerror);
  TRIALDB_CURL_FUNCTION(multi_init, curl_multi_init);
  TRIALDB_CURL_FUNCTION(multi_cleanup, curl_multi_cleanup);
  TRIALDB_CURL_FUNCTION(multi_setopt, curl_multi_setopt);
  TRIALDB_CURL_FUNCTION(multi_add_handle, curl_multi_add_handle);
  TRIALDB_CURL_FUNCTION(multi_remove_handle, curl_multi_remove_handle);
  TRIALDB_CURL_FUNCTION(multi_perform, curl_multi_perform);
  TRIALDB_CURL_FUNCTION(multi_poll, curl_multi_poll);
  TRIALDB_CURL_FUNCTION(multi_info_read, curl_multi_info_read);
  TRIALDB_CURL_FUNCTION(multi_strerror, curl_multi_strerror);
  TRIALDB_CURL_FUNCTION(slist_append, curl_slist_append);
  TRIALDB_CURL_FUNCTION(slist_free_all, curl_slist_free_all);
#undef TRIALDB_CURL_FUNCTION
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
