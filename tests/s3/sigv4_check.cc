// Server-side SigV4 verification for the tests (see sigv4_check.h), after the AWS specification
// "Create a canonical request for Signature Version 4" as it applies to S3.
#include "sigv4_check.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>

#include <algorithm>
#include <regex>
#include <sstream>
#include <vector>

namespace trialdb::test {

namespace {

std::string hex(const unsigned char* p, size_t n) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < n; ++i) {
    out.push_back(kHex[p[i] >> 4]);
    out.push_back(kHex[p[i] & 15]);
  }
  return out;
}

std::string sha256_hex(const std::string& s) {
  unsigned char md[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(s.data()), s.size(), md);
  return hex(md, sizeof md);
}

std::string hmac(const std::string& key, const std::string& data) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()), reinterpret_cast<const unsigned char*>(data.data()),
       data.size(), md, &len);
  return std::string(reinterpret_cast<char*>(md), len);
}

std::string encode(const std::string& s, bool keep_slash) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~' || (keep_slash && c == '/')) {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

std::string trim_collapse(const std::string& v) {
  std::string out;
  bool space = false;
  for (char c : v) {
    if (c == ' ' || c == '\t') {
      space = !out.empty();
    } else {
      if (space) out.push_back(' ');
      space = false;
      out.push_back(c);
    }
  }
  return out;
}

}  // namespace

std::string percent_decode(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size()) {
      out.push_back(static_cast<char>(std::stoi(s.substr(i + 1, 2), nullptr, 16)));
      i += 2;
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

std::string check_sigv4(const StubRequest& r, const std::string& secret) {
  auto auth_it = r.headers.find("authorization");
  if (auth_it == r.headers.end()) return "no Authorization header";
  std::smatch m;
  static const std::regex kAuth(
      R"(AWS4-HMAC-SHA256 Credential=([^/]+)/(\d{8})/([^/]+)/([^/]+)/aws4_request, ?SignedHeaders=([^,]+), ?Signature=([0-9a-f]{64}))");
  if (!std::regex_match(auth_it->second, m, kAuth)) return "malformed Authorization: " + auth_it->second;
  const std::string date = m[2], region = m[3], service = m[4], signed_headers = m[5], signature = m[6];

  size_t q = r.target.find('?');
  const std::string path = r.target.substr(0, q);
  const std::string canonical_uri = encode(percent_decode(path), true);

  std::vector<std::pair<std::string, std::string>> params;
  if (q != std::string::npos) {
    std::stringstream qs(r.target.substr(q + 1));
    for (std::string kv; std::getline(qs, kv, '&');) {
      size_t eq = kv.find('=');
      params.emplace_back(encode(percent_decode(kv.substr(0, eq)), false),
                          eq == std::string::npos ? "" : encode(percent_decode(kv.substr(eq + 1)), false));
    }
  }
  std::sort(params.begin(), params.end());
  std::string canonical_query;
  for (const auto& [k, v] : params) canonical_query += (canonical_query.empty() ? "" : "&") + k + "=" + v;

  std::string canonical_headers;
  std::stringstream names(signed_headers);
  for (std::string name; std::getline(names, name, ';');) {
    auto h = r.headers.find(name);
    if (h == r.headers.end()) return "signed header '" + name + "' was not sent";
    canonical_headers += name + ":" + trim_collapse(h->second) + "\n";
  }
  if (signed_headers.find("host") == std::string::npos) return "host is not signed";
  auto payload = r.headers.find("x-amz-content-sha256");
  if (payload == r.headers.end()) return "no x-amz-content-sha256 header (S3 requires it)";
  if (payload->second != "UNSIGNED-PAYLOAD" && payload->second != sha256_hex(r.body))
    return "x-amz-content-sha256 is not the SHA-256 of the body sent (S3 answers XAmzContentSHA256Mismatch)";
  auto amz_date = r.headers.find("x-amz-date");
  if (amz_date == r.headers.end()) return "no x-amz-date header";

  const std::string canonical_request = r.method + "\n" + canonical_uri + "\n" + canonical_query + "\n" +
                                        canonical_headers + "\n" + signed_headers + "\n" + payload->second;
  const std::string scope = date + "/" + region + "/" + service + "/aws4_request";
  const std::string to_sign =
      "AWS4-HMAC-SHA256\n" + amz_date->second + "\n" + scope + "\n" + sha256_hex(canonical_request);
  std::string key = hmac("AWS4" + secret, date);
  key = hmac(key, region);
  key = hmac(key, service);
  key = hmac(key, "aws4_request");
  const std::string sig = hex(reinterpret_cast<const unsigned char*>(hmac(key, to_sign).data()), 32);
  if (sig != signature) return "signature mismatch; S3 would compute it over:\n" + canonical_request;
  return "";
}

}  // namespace trialdb::test
