// S3 URL parsing, configuration resolution and key encoding (see s3_config.h).
#include "s3/s3_config.h"

#include <cstdlib>
#include <string_view>

#include "schema/status.h"

namespace trialdb {

namespace {

// Longest character reference match_char reads ("&#x" and digits) before giving up.
constexpr size_t kMaxCharRefBytes = 10;

bool is_bucket_char(char c) {
  // Real S3 allows [a-z0-9.-]; S3-compatible servers are laxer, so only refuse what would break
  // the URL or the host name.
  unsigned char u = static_cast<unsigned char>(c);
  return u > 0x20 && u < 0x7f && c != '/' && c != '?' && c != '#' && c != '%' && c != '\\' && c != '@' && c != ':';
}

// What a secret becomes in a message.
constexpr std::string_view kRedacted = "***";

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The byte the two hex digits "HH" at s[at] spell (either case), or -1.
int hex_byte(std::string_view s, size_t at) {
  if (at + 2 > s.size()) return -1;
  const int hi = hex_value(s[at]), lo = hex_value(s[at + 1]);
  return hi < 0 || lo < 0 ? -1 : hi * 16 + lo;
}

// The character "%HH" at s[at] stands for, or -1.
int percent_char(std::string_view s, size_t at) { return at < s.size() && s[at] == '%' ? hex_byte(s, at + 1) : -1; }

// Where one character c, written in one of the encodings a message can carry it in, ends when
// it starts at s[at]; npos when it is not there. The encodings: as is; percent-encoded (URLs,
// any hex case), twice percent-encoded ("%252F"); JSON-escaped ("\/", "\u002F"); an XML or HTML
// character reference ("&#47;", "&#x2f;"); '+' for a space (form encoding).
size_t match_char(std::string_view s, size_t at, unsigned char c) {
  if (at >= s.size()) return std::string::npos;
  if (static_cast<unsigned char>(s[at]) == c || (c == ' ' && s[at] == '+')) return at + 1;
  if (percent_char(s, at) == c) return at + 3;
  if (percent_char(s, at) == '%' && hex_byte(s, at + 3) == c) return at + 5;
  if (s[at] == '\\' && at + 1 < s.size() && static_cast<unsigned char>(s[at + 1]) == c) return at + 2;
  if (s.substr(at, 2) == "\\u" && at + 6 <= s.size()) {
    int v = 0;
    for (size_t i = at + 2; i < at + 6; ++i) v = hex_value(s[i]) < 0 ? -0x10000 : v * 16 + hex_value(s[i]);
    if (v == c) return at + 6;
  }
  if (s.substr(at, 2) == "&#") {
    const bool hex = at + 2 < s.size() && (s[at + 2] == 'x' || s[at + 2] == 'X');
    int v = 0;
    size_t i = at + (hex ? 3 : 2);
    for (; i < s.size() && s[i] != ';' && i < at + kMaxCharRefBytes; ++i) {
      const int d = hex ? hex_value(s[i]) : (s[i] >= '0' && s[i] <= '9' ? s[i] - '0' : -1);
      if (d < 0) return std::string::npos;
      v = v * (hex ? 16 : 10) + d;
    }
    if (i < s.size() && s[i] == ';' && v == c) return i + 1;
  }
  return std::string::npos;
}

// Where `secret`, each of its characters in any encoding match_char knows, ends when it starts
// at s[at]; npos when it is not there.
size_t match_encoded(std::string_view s, size_t at, std::string_view secret) {
  for (char c : secret) {
    at = match_char(s, at, static_cast<unsigned char>(c));
    if (at == std::string::npos) return at;
  }
  return at;
}

std::string strip_slashes(std::string s) {
  size_t b = s.find_first_not_of('/');
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of('/');
  return s.substr(b, e - b + 1);
}

std::optional<bool> parse_flag(const std::optional<std::string>& v, const char* name) {
  if (!v) return std::nullopt;
  if (*v == "1" || *v == "true" || *v == "TRUE" || *v == "yes") return true;
  if (*v == "0" || *v == "false" || *v == "FALSE" || *v == "no") return false;
  throw Error(ErrorKind::kUsage, std::string(name) + " must be 1 or 0, got '" + *v + "'");
}

}  // namespace

S3Location parse_s3_url(const std::string& url) {
  static constexpr std::string_view kScheme = "s3://";
  if (url.compare(0, kScheme.size(), kScheme) != 0)
    throw Error(ErrorKind::kUsage, "'" + url + "' is not an S3 URL (expected s3://bucket/prefix)");
  std::string rest = url.substr(kScheme.size());
  size_t slash = rest.find('/');
  S3Location loc;
  loc.bucket = rest.substr(0, slash);
  if (slash != std::string::npos) loc.prefix = strip_slashes(rest.substr(slash + 1));
  if (loc.bucket.empty()) throw Error(ErrorKind::kUsage, "'" + url + "' names no bucket (expected s3://bucket/prefix)");
  for (char c : loc.bucket)
    if (!is_bucket_char(c))
      throw Error(ErrorKind::kUsage,
                  "'" + url + "': bucket name '" + loc.bucket + "' contains a character that is not allowed");
  return loc;
}

std::optional<std::string> process_env(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return std::nullopt;
  return std::string(v);
}

S3Config resolve_s3_config(const S3Options& options, const EnvLookup& env, const FileLookup& files) {
  std::optional<AwsProfile> loaded;  // read only when the environment leaves something unset
  auto profile = [&]() -> const AwsProfile& {
    if (!loaded) loaded = load_aws_profile(env, files);
    return *loaded;
  };
  S3Config c;
  c.tuning = options;
  if (c.tuning.max_in_flight < 1) c.tuning.max_in_flight = 1;
  if (c.tuning.max_attempts < 1) c.tuning.max_attempts = 1;
  if (c.tuning.list_page_size < 1) c.tuning.list_page_size = 1;

  c.region = options.region;
  if (c.region.empty()) c.region = env("AWS_REGION").value_or("");
  if (c.region.empty()) c.region = env("AWS_DEFAULT_REGION").value_or("");
  if (c.region.empty()) c.region = profile().region;
  if (c.region.empty()) c.region = "us-east-1";

  std::string endpoint = options.endpoint;
  if (endpoint.empty()) endpoint = env("AWS_ENDPOINT_URL_S3").value_or("");
  if (endpoint.empty()) endpoint = env("AWS_ENDPOINT_URL").value_or("");
  const bool custom_endpoint = !endpoint.empty();
  if (custom_endpoint) {
    if (endpoint.rfind("http://", 0) != 0 && endpoint.rfind("https://", 0) != 0)
      throw Error(ErrorKind::kUsage, "S3 endpoint '" + endpoint + "' is not an http:// or https:// URL");
    while (endpoint.size() > 8 && endpoint.back() == '/') endpoint.pop_back();
    c.endpoint = endpoint;
  } else {
    c.endpoint = "https://s3." + c.region + ".amazonaws.com";
  }

  std::optional<bool> path_style = options.path_style;
  if (!path_style) path_style = parse_flag(env("TRIALDB_S3_PATH_STYLE"), "TRIALDB_S3_PATH_STYLE");
  // S3-compatible servers on an IP or localhost only understand path-style requests.
  c.path_style = path_style.value_or(custom_endpoint);

  c.sign = !(options.unsigned_requests ||
             parse_flag(env("TRIALDB_S3_NO_SIGN_REQUEST"), "TRIALDB_S3_NO_SIGN_REQUEST").value_or(false));
  if (c.sign) {
    c.access_key_id = env("AWS_ACCESS_KEY_ID").value_or("");
    c.secret_access_key = env("AWS_SECRET_ACCESS_KEY").value_or("");
    c.session_token = env("AWS_SESSION_TOKEN").value_or("");
    if (c.access_key_id.empty() && c.secret_access_key.empty()) {
      const AwsProfile& p = profile();
      std::string where;
      for (const std::string& f : p.files) where += (where.empty() ? "" : " or ") + f;
      if (where.empty()) where = "no file (HOME is not set)";
      const std::string which = "AWS profile '" + p.name + "'";
      if (p.explicit_name && !p.found) throw Error(ErrorKind::kUsage, which + " (AWS_PROFILE) is not in " + where);
      if (!p.unsupported.empty())
        throw Error(ErrorKind::kUsage, which + " gets its credentials through " + p.unsupported +
                                           ", which trialdb does not support; export temporary keys instead, e.g. "
                                           "eval \"$(aws configure export-credentials --profile " +
                                           p.name + " --format env)\"");
      if (p.access_key_id.empty() && p.secret_access_key.empty())
        throw Error(ErrorKind::kUsage,
                    "no AWS credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN "
                    "for temporary credentials), or put aws_access_key_id and aws_secret_access_key under profile '" +
                        p.name + "' (AWS_PROFILE picks another) in " + where +
                        ", or set TRIALDB_S3_NO_SIGN_REQUEST=1 for a public bucket");
      if (p.access_key_id.empty() || p.secret_access_key.empty())
        throw Error(ErrorKind::kUsage, "incomplete AWS credentials in " + which + " (" + where + "): " +
                                           (p.access_key_id.empty() ? "aws_access_key_id" : "aws_secret_access_key") +
                                           " is missing");
      c.access_key_id = p.access_key_id;
      c.secret_access_key = p.secret_access_key;
      c.session_token = p.session_token;
      c.credentials_from = "the keys of " + which + " (" + where + ")";
    } else {
      c.credentials_from = std::string("AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY") +
                           (c.session_token.empty() ? "" : " and AWS_SESSION_TOKEN");
    }
    if (c.access_key_id.empty())
      throw Error(ErrorKind::kUsage,
                  "incomplete AWS credentials: AWS_SECRET_ACCESS_KEY is set but AWS_ACCESS_KEY_ID is not");
    if (c.secret_access_key.empty())
      throw Error(ErrorKind::kUsage,
                  "incomplete AWS credentials: AWS_ACCESS_KEY_ID is set but AWS_SECRET_ACCESS_KEY is not");
  }
  return c;
}

std::string s3_redact(std::string message, const S3Config& config) {
  for (const std::string* secret : {&config.secret_access_key, &config.session_token}) {
    if (secret->empty()) continue;
    std::string out;
    for (size_t at = 0; at < message.size();) {
      const size_t end = match_encoded(message, at, *secret);
      if (end == std::string::npos) {
        out.push_back(message[at++]);
      } else {
        out += kRedacted;
        at = end;
      }
    }
    message = std::move(out);
  }
  return message;
}

std::string s3_uri_encode(std::string_view s, bool keep_slash) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(s.size() + s.size() / 4);
  for (char ch : s) {
    unsigned char c = static_cast<unsigned char>(ch);
    bool unreserved = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
                      c == '_' || c == '.' || c == '~' || (keep_slash && c == '/');
    if (unreserved) {
      out.push_back(ch);
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

std::string s3_object_url(const S3Config& config, const std::string& bucket, const std::string& key) {
  std::string path = "/";
  path += s3_uri_encode(key, true);
  // A dotted bucket as a host label breaks the TLS wildcard certificate, so such buckets always
  // go path-style (as the AWS SDKs do). The bucket itself is "/bucket", without a trailing '/'.
  if (config.path_style || bucket.find('.') != std::string::npos)
    return config.endpoint + "/" + s3_uri_encode(bucket, false) + (key.empty() ? "" : path);
  size_t host = config.endpoint.find("://") + 3;
  return config.endpoint.substr(0, host) + bucket + "." + config.endpoint.substr(host) + path;
}

}  // namespace trialdb
