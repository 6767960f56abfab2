// AWS shared configuration files (aws_shared_config.h).
#include "s3/aws_shared_config.h"

#include <cctype>
#include <fstream>
#include <sstream>

#include "s3/trim.h"

namespace trialdb {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

std::optional<std::string> read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::optional<std::map<std::string, std::string>> ini_section(std::string_view text, std::string_view section) {
  std::optional<std::map<std::string, std::string>> out;
  bool in_section = false;
  while (!text.empty()) {
    size_t eol = text.find('\n');
    std::string_view line = trim_ascii_space(text.substr(0, eol));
    text = eol == std::string_view::npos ? std::string_view() : text.substr(eol + 1);
    if (line.empty() || line.front() == '#' || line.front() == ';') continue;
    if (line.front() == '[' && line.back() == ']') {
      in_section = trim_ascii_space(line.substr(1, line.size() - 2)) == section;
      if (in_section && !out) out.emplace();
      continue;
    }
    size_t eq = line.find('=');
    if (!in_section || eq == std::string_view::npos) continue;
    (*out)[lower(trim_ascii_space(line.substr(0, eq)))] = std::string(trim_ascii_space(line.substr(eq + 1)));
  }
  return out;
}

AwsProfile load_aws_profile(const EnvLookup& env, const FileLookup& files) {
  AwsProfile p;
  std::optional<std::string> named = env("AWS_PROFILE");
  p.explicit_name = named.has_value();
  p.name = named.value_or("default");
  std::optional<std::string> home = env("HOME");
  std::optional<std::string> cred_path = env("AWS_SHARED_CREDENTIALS_FILE");
  std::optional<std::string> config_path = env("AWS_CONFIG_FILE");
  if (!cred_path && home) cred_path = *home + "/.aws/credentials";
  if (!config_path && home) config_path = *home + "/.aws/config";

  // The credentials file names sections after the profile; the config file says [profile NAME],
  // except for the default profile.
  std::map<std::string, std::string> creds, config;
  if (cred_path) {
    p.files.push_back(*cred_path);
    if (std::optional<std::string> text = files(*cred_path))
      if (auto s = ini_section(*text, p.name)) creds = std::move(*s), p.found = true;
  }
  if (config_path) {
    p.files.push_back(*config_path);
    if (std::optional<std::string> text = files(*config_path)) {
      auto s = ini_section(*text, "profile " + p.name);
      if (!s && p.name == "default") s = ini_section(*text, "default");
      if (s) config = std::move(*s), p.found = true;
    }
  }
  // Keys come from one place, the credentials file first, as the AWS CLI does.
  const bool in_creds = creds.count("aws_access_key_id") || creds.count("aws_secret_access_key");
  const std::map<std::string, std::string>& keys = in_creds ? creds : config;
  auto get = [](const std::map<std::string, std::string>& m, const char* k) {
    auto it = m.find(k);
    return it == m.end() ? std::string() : it->second;
  };
  p.access_key_id = get(keys, "aws_access_key_id");
  p.secret_access_key = get(keys, "aws_secret_access_key");
  p.session_token = get(keys, "aws_session_token");
  p.region = get(config, "region");
  if (p.access_key_id.empty() && p.secret_access_key.empty())
    for (const char* k : {"credential_process", "role_arn", "sso_session", "sso_start_url", "web_identity_token_file"})
      if (creds.count(k) || config.count(k)) {
        p.unsupported = k;
        break;
      }
  return p;
}

}  // namespace trialdb
