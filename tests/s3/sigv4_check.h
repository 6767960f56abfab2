// Test-only: recomputes an AWS Signature Version 4 the way S3 does on receipt (decode the path and
// query, re-encode them canonically, sort the query) and compares it with the request's
// Authorization header. s3rver does not verify signatures, so this is what proves that the URLs
// trialdb builds are canonical enough for libcurl's signature to be accepted by real S3 and by
// verifying servers such as MinIO. (The product itself never computes signatures.)
#pragma once
#include <string>

#include "stub_http_server.h"

namespace trialdb::test {

// "%2F" -> "/": undoes URL percent-encoding (S3 decodes paths and query values this way).
std::string percent_decode(const std::string& s);

// "" when the signature is valid for secret, otherwise what is wrong (with the canonical request).
std::string check_sigv4(const StubRequest& request, const std::string& secret);

}  // namespace trialdb::test
