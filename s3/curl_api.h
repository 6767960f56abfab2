// libcurl as a table of the functions the S3 transport (s3_http.cc) calls, the library opened and
// every function resolved on the first S3 use (schema/lazy_library.h says why): trialdb does not
// link libcurl, so the commands that never touch S3 do not load it and its ~20 dependencies.
// Types and constants still come from <curl/curl.h>; only the calls go through the table.
#pragma once
#include <curl/curl.h>

namespace trialdb {

// Every libcurl function the table holds, listed once, X(name) for curl_name: the members below and
// their resolution (curl_api.cc) both come from this list, so none is declared and left null.
#define TRIALDB_CURL_FUNCTIONS(X) \
  X(global_init)                  \
  X(easy_init)                    \
  X(easy_reset)                   \
  X(easy_cleanup)                 \
  X(easy_setopt)                  \
  X(easy_getinfo)                 \
  X(easy_strerror)                \
  X(multi_init)                   \
  X(multi_cleanup)                \
  X(multi_setopt)                 \
  X(multi_add_handle)             \
  X(multi_remove_handle)          \
  X(multi_perform)                \
  X(multi_poll)                   \
  X(multi_info_read)              \
  X(multi_strerror)               \
  X(slist_append)                 \
  X(slist_free_all)

struct CurlApi {
#define TRIALDB_CURL_FIELD(name) decltype(&::curl_##name) name;
  TRIALDB_CURL_FUNCTIONS(TRIALDB_CURL_FIELD)
#undef TRIALDB_CURL_FIELD
};

// The table, with libcurl loaded, every function resolved and curl_global_init run, on the first
// call. Throws Error (kIo) naming libcurl and what is missing when it cannot be loaded.
const CurlApi& curl_api();

}  // namespace trialdb
