// What an ingest with a selection stores (selection.h).
#include "ingest/pipeline/selection.h"

#include <charconv>

#include "ingest/pipeline/catalog.h"

namespace trialdb {

namespace {

bool parse_step(std::string_view text, int64_t* out) {
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && end == text.data() + text.size() && *out >= 0;
}

}  // namespace

Status parse_step_range(const std::string& text, SelectionSpec* spec) {
  const size_t colon = text.find(':');
  const auto bad = [&] { return Status::usage("--steps must be A:B, A: or :B with steps A < B, got '" + text + "'"); };
  if (colon == std::string::npos) return bad();
  const std::string_view first(text.data(), colon), end(text.data() + colon + 1, text.size() - colon - 1);
  int64_t a = 0, b = 0;
  if (first.empty() && end.empty()) return bad();
  if (!first.empty() && !parse_step(first, &a)) return bad();
  if (!end.empty() && !parse_step(end, &b)) return bad();
  if (!first.empty() && !end.empty() && a >= b) return bad();
  if (!first.empty()) spec->first_step = a;
  if (!end.empty()) spec->end_step = b;
  return Status::ok();
}

Selection::Selection(const SelectionSpec& spec, const Catalog& catalog) : spec_(spec) {
  key_ = "steps " + (spec_.first_step ? std::to_string(*spec_.first_step) : "") + ":" +
         (spec_.end_step ? std::to_string(*spec_.end_step) : "") + "\ntensors " + spec_.tensor_regex;
  if (!spec_.tensor_regex.empty()) {
    const Status st = PyRegex::compile(spec_.tensor_regex, &regex_);
    if (!st.is_ok()) throw Error(Status::usage("--tensors: " + st.cause()));
  }
  for (const auto& name : spec_.collections) {
    std::vector<std::string> patterns;
    if (!catalog.collection_members(name, &member_names_, &patterns))
      throw Error(Status::usage("--collections: the trial defines no collection '" + name +
                                "' (collections: " + catalog.collection_names() + ")"));
    key_ += "\ncollection " + name;
    for (const auto& p : patterns) {
      key_ += "\n  pattern " + p;
      std::unique_ptr<PyRegex> re;
      if (PyRegex::compile(p, &re).is_ok()) member_regexes_.push_back(std::move(re));
    }
  }
  for (const auto& tensor : member_names_) key_ += "\nlisted " + tensor;
}

bool Selection::selects_tensor(const std::string& name) const {
  if (spec_.selects_all_tensors()) return true;
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = decided_.find(name);
  if (it == decided_.end()) it = decided_.emplace(name, matches(name)).first;
  return it->second;
}

// --tensors or --collections: either selects a tensor. A --tensors search past PCRE2's limits
// fails the ingest (the user's pattern cannot decide: neither selecting nor leaving out the
// tensor would be what was asked); a collection's include_regex past them is recorded as an
// ingest error by the catalog, and the tensor is not a member.
bool Selection::matches(const std::string& name) const {
  if (regex_) {
    try {
      if (regex_->search(name)) return true;
    } catch (const Error& e) {
      throw Error(Status::usage("--tensors: " + e.status().cause()));
    }
  }
  if (member_names_.count(name)) return true;
  try {
    for (const auto& re : member_regexes_)
      if (re->search(name)) return true;
  } catch (const Error&) {
  }
  return false;
}

}  // namespace trialdb
