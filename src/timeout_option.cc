// timeout_option.h: seconds as an option.
#include "src/timeout_option.h"

#include <cmath>
#include <cstdlib>

namespace trialdb::cli {

CLI::Option* add_timeout_option(CLI::App* cmd, double* seconds, const std::string& help, const std::string& name) {
  return cmd->add_option(name, *seconds, help)
      ->check(CLI::Validator(
          [](std::string& text) -> std::string {
            // CLI::NonNegativeNumber lets NaN through (every comparison with it is false).
            char* end = nullptr;
            const double v = std::strtod(text.c_str(), &end);
            if (end == text.c_str() || *end || !std::isfinite(v) || v < 0 || v > kMaxTimeoutSeconds)
              return "must be a number of seconds from 0 (no limit) to a year, got '" + text + "'";
            return {};
          },
          "SECONDS"));
}

}  // namespace trialdb::cli
