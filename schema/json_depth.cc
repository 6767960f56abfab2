#include "schema/json_depth.h"

#include <cstddef>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace trialdb {

namespace {

// Counts the open objects and arrays; returning false makes sax_parse stop there.
class DepthCounter : public nlohmann::json_sax<nlohmann::json> {
 public:
  explicit DepthCounter(int max_depth) : max_depth_(max_depth) {}
  bool too_deep() const { return too_deep_; }

  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool key(string_t&) override { return true; }
  bool start_object(std::size_t) override { return open(); }
  bool end_object() override { return close(); }
  bool start_array(std::size_t) override { return open(); }
  bool end_array() override { return close(); }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override { return false; }

 private:
  bool open() {
    too_deep_ = ++depth_ > max_depth_;
    return !too_deep_;
  }
  bool close() {
    --depth_;
    return true;
  }
  const int max_depth_;
  int depth_ = 0;
  bool too_deep_ = false;
};

Status too_deep_error(int max_depth) {
  return Status::invalid("JSON nested deeper than " + std::to_string(max_depth) + " levels");
}

}  // namespace

Status check_json_depth(std::string_view text, int max_depth) {
  DepthCounter counter(max_depth);
  nlohmann::json::sax_parse(text.begin(), text.end(), &counter, nlohmann::json::input_format_t::json,
                            /*strict=*/true, /*ignore_comments=*/false);
  if (counter.too_deep()) return too_deep_error(max_depth);
  return Status::ok();
}

Status parse_json_within_depth(std::string_view text, int max_depth, nlohmann::json* out) {
  // The parser's callback sees each object and array as it opens, at its depth (the outermost:
  // 0); one past the bound is left out, and with it everything inside.
  bool deeper = false;
  const auto bound = [&deeper, max_depth](int depth, nlohmann::json::parse_event_t event, nlohmann::json&) {
    const bool opens =
        event == nlohmann::json::parse_event_t::object_start || event == nlohmann::json::parse_event_t::array_start;
    const bool past = opens && depth >= max_depth;
    deeper = deeper || past;
    return !past;
  };
  *out = nlohmann::json::parse(text.begin(), text.end(), bound, /*allow_exceptions=*/false);
  if (deeper) {
    *out = nlohmann::json();
    return too_deep_error(max_depth);
  }
  return Status::ok();
}

}  // namespace trialdb
