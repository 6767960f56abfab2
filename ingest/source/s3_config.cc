// S3 URL parsing, configuration resolution and key encoding (see s3_config.h).
#include "ingest/source/s3_config.h"

#include <cstdlib>

#include "ingest/source/source.h"

namespace trialdb {

namespace {

bool is_bucket_char(char c) {
  // Real S3 allows [a-z0-9.-]; S3-compatible servers are laxer, so only refuse what would break
  // the URL or the host name.
  unsigned char u = static_cast<unsigned char>(c);
  return u > 0x20 && u < 0x7f && c != '/' && c != '?' && c != '#' && c != '%' && c != '\\' &&
         c != '@' && c != ':';
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
  if (loc.bucket.empty())
    throw Error(ErrorKind::kUsage, "'" + url + "' names no bucket (expected s3://bucket/prefix)");
  for (char c : loc.bucket)
    if (!is_bucket_char(c))
      throw Error(ErrorKind::kUsage, "'" + url + "': bucket name '" + loc.bucket + "' contains a character that is not allowed");
  return loc;
}

std::optional<std::string> process_env(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return std::nullopt;
  return std::string(v);
}

S3Config resolve_s3_config(const S3Options& options, const EnvLookup& env, const FileLookup& files) {
  std::optional<AwsProfile> loaded;   // read only when the environment leaves something unset
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
      if (p.explicit_name && !p.found)
        throw Error(ErrorKind::kUsage, which + " (AWS_PROFILE) is not in " + where);
      if (!p.unsupported.empty())
        throw Error(ErrorKind::kUsage, which + " gets its credentials through " + p.unsupported +
                          ", which trialdb does not support; export temporary keys instead, e.g. "
                          "eval \"$(aws configure export-credentials --profile " + p.name + " --format env)\"");
      if (p.access_key_id.empty() && p.secret_access_key.empty())
        throw Error(ErrorKind::kUsage, 
            "no AWS credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN "
            "for temporary credentials), or put aws_access_key_id and aws_secret_access_key under profile '" +
            p.name + "' (AWS_PROFILE picks another) in " + where +
            ", or set TRIALDB_S3_NO_SIGN_REQUEST=1 for a public bucket");
      if (p.access_key_id.empty() || p.secret_access_key.empty())
        throw Error(ErrorKind::kUsage, "incomplete AWS credentials in " + which + " (" + where + "): " +
                          (p.access_key_id.empty() ? "aws_access_key_id" : "aws_secret_access_key") + " is missing");
      c.access_key_id = p.access_key_id;
      c.secret_access_key = p.secret_access_key;
      c.session_token = p.session_token;
      c.credentials_from = "the keys of " + which + " (" + where + ")";
    } else {
      c.credentials_from = std::string("AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY") +
                           (c.session_token.empty() ? "" : " and AWS_SESSION_TOKEN");
    }
    if (c.access_key_id.empty())
      throw Error(ErrorKind::kUsage, "incomplete AWS credentials: AWS_SECRET_ACCESS_KEY is set but AWS_ACCESS_KEY_ID is not");
    if (c.secret_access_key.empty())
      throw Error(ErrorKind::kUsage, "incomplete AWS credentials: AWS_ACCESS_KEY_ID is set but AWS_SECRET_ACCESS_KEY is not");
  }
  return c;
}

std::string s3_redact(std::string message, const S3Config& config) {
  for (const std::string* secret : {&config.secret_access_key, &config.session_token}) {
    if (secret->empty()) continue;
    for (size_t at; (at = message.find(*secret)) != std::string::npos;) message.replace(at, secret->size(), "***");
  }
  return message;
}

std::string s3_uri_encode(std::string_view s, bool keep_slash) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(s.size() + s.size() / 4);
  for (char ch : s) {
    unsigned char c = static_cast<unsigned char>(ch);
    bool unreserved = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                      c == '-' || c == '_' || c == '.' || c == '~' || (keep_slash && c == '/');
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
