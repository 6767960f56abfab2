// libcurl as a table of the functions the S3 transport (s3_http.cc) calls, the library opened and
// every function resolved on the first S3 use (schema/lazy_library.h says why): trialdb does not
// link libcurl, so the commands that never touch S3 do not load it and its ~20 dependencies.
// Types and constants still come from <curl/curl.h>; only the calls go through the table.
#pragma once
#include <curl/curl.h>

namespace trialdb {

struct CurlApi {
  decltype(&::curl_global_init) global_init;
  decltype(&::curl_easy_init) easy_init;
  decltype(&::curl_easy_reset) easy_reset;
  decltype(&::curl_easy_cleanup) easy_cleanup;
  decltype(&::curl_easy_setopt) easy_setopt;
  decltype(&::curl_easy_getinfo) easy_getinfo;
  decltype(&::curl_easy_strerror) easy_strerror;
  decltype(&::curl_multi_init) multi_init;
  decltype(&::curl_multi_cleanup) multi_cleanup;
  decltype(&::curl_multi_setopt) multi_setopt;
  decltype(&::curl_multi_add_handle) multi_add_handle;
  decltype(&::curl_multi_remove_handle) multi_remove_handle;
  decltype(&::curl_multi_perform) multi_perform;
  decltype(&::curl_multi_poll) multi_poll;
  decltype(&::curl_multi_info_read) multi_info_read;
  decltype(&::curl_multi_strerror) multi_strerror;
  decltype(&::curl_slist_append) slist_append;
  decltype(&::curl_slist_free_all) slist_free_all;
};

// The table, with libcurl loaded, every function resolved and curl_global_init run, on the first
// call. Throws Error (kIo) naming libcurl and what is missing when it cannot be loaded.
const CurlApi& curl_api();

}  // namespace trialdb
