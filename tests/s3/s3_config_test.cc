// S3 URL parsing, option/environment resolution, key encoding and URL shapes.
#include <gtest/gtest.h>

#include <map>

#include "s3/s3_config.h"
#include "schema/status.h"

namespace trialdb {
namespace {

EnvLookup fake_env(std::map<std::string, std::string> vars) {
  return [vars](const char* name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end() || it->second.empty()) return std::nullopt;
    return it->second;
  };
}

const std::map<std::string, std::string> kCreds = {{"AWS_ACCESS_KEY_ID", "AKID"},
                                                   {"AWS_SECRET_ACCESS_KEY", "s3cr3t/value+x"}};

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(S3Config, ParsesUrls) {
  S3Location a = parse_s3_url("s3://bucket/job/debug-output/");
  EXPECT_EQ(a.bucket, "bucket");
  EXPECT_EQ(a.prefix, "job/debug-output");
  S3Location b = parse_s3_url("s3://bucket");
  EXPECT_EQ(b.bucket, "bucket");
  EXPECT_EQ(b.prefix, "");
  EXPECT_EQ(parse_s3_url("s3://b//x//").prefix, "x");
  EXPECT_NE(error_of([] { parse_s3_url("s3:///prefix"); }).find("names no bucket"), std::string::npos);
  EXPECT_NE(error_of([] { parse_s3_url("http://bucket/x"); }).find("not an S3 URL"), std::string::npos);
  EXPECT_NE(error_of([] { parse_s3_url("s3://bu cket/x"); }).find("not allowed"), std::string::npos);
  EXPECT_NE(error_of([] { parse_s3_url("s3://user@bucket/x"); }).find("not allowed"), std::string::npos);
}

TEST(S3Config, DefaultsToAwsWithVirtualHostedUrls) {
  S3Config c = resolve_s3_config({}, fake_env(kCreds));
  EXPECT_EQ(c.region, "us-east-1");
  EXPECT_EQ(c.endpoint, "https://s3.us-east-1.amazonaws.com");
  EXPECT_FALSE(c.path_style);
  EXPECT_TRUE(c.sign);
  EXPECT_EQ(c.access_key_id, "AKID");
  EXPECT_EQ(s3_object_url(c, "bucket", "a b/c+d.json"), "https://bucket.s3.us-east-1.amazonaws.com/a%20b/c%2Bd.json");
  EXPECT_EQ(s3_object_url(c, "bucket", ""), "https://bucket.s3.us-east-1.amazonaws.com/");
  // Dotted buckets cannot be TLS host labels: path-style.
  EXPECT_EQ(s3_object_url(c, "my.bucket", "k"), "https://s3.us-east-1.amazonaws.com/my.bucket/k");
}

TEST(S3Config, RegionPrecedence) {
  auto env = kCreds;
  env["AWS_DEFAULT_REGION"] = "eu-west-1";
  EXPECT_EQ(resolve_s3_config({}, fake_env(env)).region, "eu-west-1");
  env["AWS_REGION"] = "ap-south-1";
  EXPECT_EQ(resolve_s3_config({}, fake_env(env)).region, "ap-south-1");
  S3Options o;
  o.region = "sa-east-1";
  S3Config c = resolve_s3_config(o, fake_env(env));
  EXPECT_EQ(c.region, "sa-east-1");
  EXPECT_EQ(c.endpoint, "https://s3.sa-east-1.amazonaws.com");
}

TEST(S3Config, EndpointAndPathStyle) {
  auto env = kCreds;
  env["AWS_ENDPOINT_URL"] = "http://127.0.0.1:9000/";
  S3Config c = resolve_s3_config({}, fake_env(env));
  EXPECT_EQ(c.endpoint, "http://127.0.0.1:9000");
  EXPECT_TRUE(c.path_style);  // a custom endpoint defaults to path-style
  EXPECT_EQ(s3_object_url(c, "bucket", "x/y"), "http://127.0.0.1:9000/bucket/x/y");
  EXPECT_EQ(s3_object_url(c, "bucket", ""), "http://127.0.0.1:9000/bucket");

  env["AWS_ENDPOINT_URL_S3"] = "https://minio.example:9000";  // the service-specific one wins
  env["TRIALDB_S3_PATH_STYLE"] = "0";
  c = resolve_s3_config({}, fake_env(env));
  EXPECT_EQ(c.endpoint, "https://minio.example:9000");
  EXPECT_FALSE(c.path_style);
  EXPECT_EQ(s3_object_url(c, "bucket", "k"), "https://bucket.minio.example:9000/k");

  S3Options o;
  o.endpoint = "http://localhost:4566";  // --endpoint beats the environment
  o.path_style = true;
  c = resolve_s3_config(o, fake_env(env));
  EXPECT_EQ(c.endpoint, "http://localhost:4566");
  EXPECT_TRUE(c.path_style);

  env.erase("AWS_ENDPOINT_URL_S3");
  env.erase("AWS_ENDPOINT_URL");
  env["TRIALDB_S3_PATH_STYLE"] = "1";
  c = resolve_s3_config({}, fake_env(env));
  EXPECT_EQ(s3_object_url(c, "bucket", "k"), "https://s3.us-east-1.amazonaws.com/bucket/k");

  env["TRIALDB_S3_PATH_STYLE"] = "sometimes";
  EXPECT_NE(error_of([&] { resolve_s3_config({}, fake_env(env)); }).find("TRIALDB_S3_PATH_STYLE"), std::string::npos);

  o = S3Options{};
  o.endpoint = "ftp://host";
  EXPECT_NE(error_of([&] { resolve_s3_config(o, fake_env(kCreds)); }).find("not an http"), std::string::npos);
}

TEST(S3Config, MissingOrPartialCredentialsAreClearErrors) {
  std::string none = error_of([] { resolve_s3_config({}, fake_env({})); });
  EXPECT_NE(none.find("no AWS credentials"), std::string::npos) << none;
  EXPECT_NE(none.find("AWS_ACCESS_KEY_ID"), std::string::npos);
  EXPECT_NE(none.find("AWS_SECRET_ACCESS_KEY"), std::string::npos);

  std::string no_secret = error_of([] { resolve_s3_config({}, fake_env({{"AWS_ACCESS_KEY_ID", "AKID"}})); });
  EXPECT_NE(no_secret.find("AWS_SECRET_ACCESS_KEY is not"), std::string::npos) << no_secret;

  std::string no_key = error_of([] {
    resolve_s3_config({}, fake_env({{"AWS_SECRET_ACCESS_KEY", "hush-hush-value"}}));
  });
  EXPECT_NE(no_key.find("AWS_ACCESS_KEY_ID is not"), std::string::npos) << no_key;
  EXPECT_EQ(no_key.find("hush-hush-value"), std::string::npos) << "a secret leaked into: " << no_key;

  // Public buckets: no credentials needed when unsigned requests are asked for.
  S3Options o;
  o.unsigned_requests = true;
  EXPECT_FALSE(resolve_s3_config(o, fake_env({})).sign);
  EXPECT_FALSE(resolve_s3_config({}, fake_env({{"TRIALDB_S3_NO_SIGN_REQUEST", "1"}})).sign);
}

TEST(S3Config, SessionTokenAndRedaction) {
  auto env = kCreds;
  env["AWS_SESSION_TOKEN"] = "FQoGZXIvYXdzEJr//token==";
  S3Config c = resolve_s3_config({}, fake_env(env));
  EXPECT_EQ(c.session_token, "FQoGZXIvYXdzEJr//token==");
  EXPECT_EQ(s3_redact("x s3cr3t/value+x y FQoGZXIvYXdzEJr//token== z", c), "x *** y *** z");
  // The secret as a URL may carry it: percent-encoded in either hex case, or twice ("%252F").
  EXPECT_EQ(s3_redact("x s3cr3t%2Fvalue%2bx y", c), "x *** y");
  EXPECT_EQ(s3_redact("x s3cr3t%252Fvalue%252Bx y", c), "x *** y");
  EXPECT_EQ(s3_redact("x s3cr3t%252Fvalue%252Cx y", c), "x s3cr3t%252Fvalue%252Cx y");
  EXPECT_EQ(s3_redact("x s3cr3t%252Fvalue%252", c), "x s3cr3t%252Fvalue%252");
}

FileLookup fake_files(std::map<std::string, std::string> files) {
  return [files](const std::string& path) -> std::optional<std::string> {
    auto it = files.find(path);
    if (it == files.end()) return std::nullopt;
    return it->second;
  };
}

TEST(AwsSharedConfig, IniSections) {
  const char* text =
      "# comment\n[default]\nregion = eu-west-1\n\n[profile dev]\n ; note\n"
      "  Region=us-west-2  \nbad line\n[empty]\n";
  auto d = ini_section(text, "default");
  ASSERT_TRUE(d);
  EXPECT_EQ(d->at("region"), "eu-west-1");
  auto dev = ini_section(text, "profile dev");
  ASSERT_TRUE(dev);
  EXPECT_EQ(dev->at("region"), "us-west-2");  // keys lower-cased, values trimmed
  EXPECT_EQ(dev->size(), 1u);
  ASSERT_TRUE(ini_section(text, "empty"));
  EXPECT_TRUE(ini_section(text, "empty")->empty());
  EXPECT_FALSE(ini_section(text, "dev"));  // the config file's [profile dev] is not [dev]
}

// What the environment leaves unset comes from ~/.aws: the default profile, or AWS_PROFILE's;
// keys from the credentials file before the config file; the region from the config file.
TEST(S3Config, CredentialsAndRegionFromTheSharedFiles) {
  const std::map<std::string, std::string> files = {
      {"/home/u/.aws/credentials",
       "[default]\naws_access_key_id = AKDEFAULT\naws_secret_access_key = default-secret\n"
       "[dev]\naws_access_key_id=AKDEV\naws_secret_access_key=dev-secret\naws_session_token=dev-token\n"},
      {"/home/u/.aws/config",
       "[default]\nregion = eu-west-1\n[profile dev]\nregion = ap-south-1\n"
       "[profile cfgonly]\naws_access_key_id = AKCFG\naws_secret_access_key = cfg-secret\n"}};
  S3Config d = resolve_s3_config({}, fake_env({{"HOME", "/home/u"}}), fake_files(files));
  EXPECT_EQ(d.access_key_id, "AKDEFAULT");
  EXPECT_EQ(d.secret_access_key, "default-secret");
  EXPECT_EQ(d.session_token, "");
  EXPECT_EQ(d.region, "eu-west-1");
  EXPECT_EQ(d.endpoint, "https://s3.eu-west-1.amazonaws.com");

  S3Config dev = resolve_s3_config({}, fake_env({{"HOME", "/home/u"}, {"AWS_PROFILE", "dev"}}), fake_files(files));
  EXPECT_EQ(dev.access_key_id, "AKDEV");
  EXPECT_EQ(dev.session_token, "dev-token");
  EXPECT_EQ(dev.region, "ap-south-1");

  S3Config cfg = resolve_s3_config({}, fake_env({{"HOME", "/home/u"}, {"AWS_PROFILE", "cfgonly"}}), fake_files(files));
  EXPECT_EQ(cfg.access_key_id, "AKCFG");
  EXPECT_EQ(cfg.region, "us-east-1");

  // The environment wins, for keys (both from one place) and for the region.
  auto env = kCreds;
  env["HOME"] = "/home/u";
  env["AWS_REGION"] = "sa-east-1";
  S3Config e = resolve_s3_config({}, fake_env(env), fake_files(files));
  EXPECT_EQ(e.access_key_id, "AKID");
  EXPECT_EQ(e.region, "sa-east-1");

  // AWS_SHARED_CREDENTIALS_FILE and AWS_CONFIG_FILE move the files.
  S3Config moved =
      resolve_s3_config({}, fake_env({{"AWS_SHARED_CREDENTIALS_FILE", "/etc/c"}, {"AWS_CONFIG_FILE", "/etc/f"}}),
                        fake_files({{"/etc/c", "[default]\naws_access_key_id=A2\naws_secret_access_key=S2\n"},
                                    {"/etc/f", "[default]\nregion=us-east-2\n"}}));
  EXPECT_EQ(moved.access_key_id, "A2");
  EXPECT_EQ(moved.region, "us-east-2");
}

TEST(S3Config, SharedFileErrorsNameProfileAndFilesNeverSecrets) {
  const std::map<std::string, std::string> files = {
      {"/home/u/.aws/credentials", "[half]\naws_secret_access_key = half-secret-value\n"},
      {"/home/u/.aws/config", "[profile sso]\nsso_session = corp\nregion = eu-north-1\n"}};
  auto err = [&](std::map<std::string, std::string> vars) {
    vars["HOME"] = "/home/u";
    return error_of([&] { resolve_s3_config({}, fake_env(vars), fake_files(files)); });
  };
  std::string missing = err({{"AWS_PROFILE", "nope"}});
  EXPECT_NE(missing.find("AWS profile 'nope' (AWS_PROFILE) is not in /home/u/.aws/credentials or /home/u/.aws/config"),
            std::string::npos)
      << missing;
  std::string half = err({{"AWS_PROFILE", "half"}});
  EXPECT_NE(half.find("incomplete AWS credentials in AWS profile 'half'"), std::string::npos) << half;
  EXPECT_NE(half.find("aws_access_key_id is missing"), std::string::npos) << half;
  EXPECT_EQ(half.find("half-secret-value"), std::string::npos) << "a secret leaked into: " << half;
  std::string sso = err({{"AWS_PROFILE", "sso"}});
  EXPECT_NE(sso.find("gets its credentials through sso_session, which trialdb does not support"), std::string::npos)
      << sso;
  std::string none = err({});  // no [default] anywhere
  EXPECT_NE(none.find("no AWS credentials"), std::string::npos) << none;
  EXPECT_NE(none.find("under profile 'default'"), std::string::npos) << none;
}

TEST(S3Config, UriEncoding) {
  EXPECT_EQ(s3_uri_encode("AZaz09-_.~", false), "AZaz09-_.~");
  EXPECT_EQ(s3_uri_encode("a/b c+d=e&f%", false), "a%2Fb%20c%2Bd%3De%26f%25");
  EXPECT_EQ(s3_uri_encode("a/b c", true), "a/b%20c");
  EXPECT_EQ(s3_uri_encode("\xC3\xA9", true), "%C3%A9");
}

}  // namespace
}  // namespace trialdb
