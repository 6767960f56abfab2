// Sets environment variables for one test and restores the previous values afterwards. The S3
// source reads AWS_* from the environment, so the tests drive it the way users do.
#pragma once
#include <cstdlib>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace trialdb::test {

class ScopedEnv {
 public:
  ScopedEnv() = default;
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;
  ~ScopedEnv() {
    for (auto it = saved_.rbegin(); it != saved_.rend(); ++it) {
      if (it->second) ::setenv(it->first.c_str(), it->second->c_str(), 1);
      else ::unsetenv(it->first.c_str());
    }
  }
  // value std::nullopt unsets the variable.
  ScopedEnv& set(const std::string& name, std::optional<std::string> value) {
    const char* old = std::getenv(name.c_str());
    saved_.emplace_back(name, old ? std::optional<std::string>(old) : std::nullopt);
    if (value) ::setenv(name.c_str(), value->c_str(), 1);
    else ::unsetenv(name.c_str());
    return *this;
  }
  // Clears every variable the S3 source reads, so the host's own AWS settings cannot leak in.
  ScopedEnv& clear_aws() {
    for (const char* v : {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_REGION",
                          "AWS_DEFAULT_REGION", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3", "AWS_CA_BUNDLE",
                          "TRIALDB_S3_PATH_STYLE", "TRIALDB_S3_NO_SIGN_REQUEST", "AWS_PROFILE"})
      set(v, std::nullopt);
    // Nor the host's ~/.aws files.
    set("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/trialdb-test/credentials");
    set("AWS_CONFIG_FILE", "/nonexistent/trialdb-test/config");
    return *this;
  }

 private:
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

}  // namespace trialdb::test
