// The two XML documents the S3 source reads: a ListObjectsV2 page and an <Error> body.
//
// S3 answers with small, flat, machine-written XML, so a full XML library is not needed; but keys
// are user data and arrive entity-escaped (&amp; &lt; &#13; ...), tags may carry attributes or a
// namespace prefix, and text may be split by comments or CDATA. This reader handles exactly that
// and rejects anything malformed instead of guessing.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace trialdb {

struct S3Object {
  std::string key;
  uint64_t size = 0;
};

struct S3ListPage {
  std::vector<S3Object> objects;
  bool truncated = false;
  std::string next_continuation_token;  // "" when the server sent none
};

// Throws Error (kIo) ("malformed ListObjectsV2 response: ...") on anything it cannot trust.
S3ListPage parse_list_objects_v2(std::string_view xml);

struct S3ErrorBody {
  std::string code;  // e.g. NoSuchKey, AccessDenied, SlowDown; "" when the body is no <Error>
  std::string message;
};
// Best effort: never throws; empty fields when the body is not an S3 error document.
S3ErrorBody parse_s3_error(std::string_view xml);

// The name of the root element of a well-formed XML document (namespace prefix dropped), or ""
// when the text is no such document. Never throws.
std::string xml_root_name(std::string_view xml);

// Replaces the five predefined entities and numeric character references (&#N; &#xH;, written
// out as UTF-8). Throws Error (kIo) on an unknown or unterminated entity.
std::string xml_unescape(std::string_view text);

}  // namespace trialdb
