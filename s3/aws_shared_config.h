// The AWS CLI's shared configuration files, for users whose credentials live there rather than in
// the environment: ~/.aws/credentials and ~/.aws/config (AWS_SHARED_CREDENTIALS_FILE and
// AWS_CONFIG_FILE move them), read for one profile (AWS_PROFILE, else "default"). Only static keys
// and the region are taken; profiles that obtain credentials another way (role_arn, sso_*,
// credential_process) are recognised so the error can say so.
//
// Pure functions over an environment and a file reader, so tests need no home directory.
#pragma once
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace trialdb {

using EnvLookup = std::function<std::optional<std::string>(const char*)>;
using FileLookup = std::function<std::optional<std::string>(const std::string& path)>;
std::optional<std::string> read_text_file(const std::string& path);  // nullopt when unreadable

// key = value lines of [section] in INI text (comments start with # or ;). Keys are lower-cased;
// nullopt when the section is absent.
std::optional<std::map<std::string, std::string>> ini_section(std::string_view text, std::string_view section);

struct AwsProfile {
  std::string name;                // the profile asked for
  bool explicit_name = false;      // named by AWS_PROFILE (absent: an error), not the default
  std::vector<std::string> files;  // the files looked in, for messages
  bool found = false;              // present in at least one of them
  std::string access_key_id, secret_access_key, session_token;  // credentials file, else config
  std::string region;                                           // config file
  std::string unsupported;  // e.g. "role_arn": how the profile gets credentials instead
};

AwsProfile load_aws_profile(const EnvLookup& env, const FileLookup& files);

}  // namespace trialdb
