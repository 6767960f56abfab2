#include "ingest/index_file.h"

#include <nlohmann/json.hpp>

namespace trialdb {

using nlohmann::json;

bool parse_index_path(std::string_view path, int64_t* step, std::string* worker) {
  size_t slash = path.rfind('/');
  std::string_view base = slash == std::string_view::npos ? path : path.substr(slash + 1);
  constexpr std::string_view kExt = ".json";
  if (base.size() < 12 + 1 + 1 + kExt.size() || base.substr(base.size() - kExt.size()) != kExt) return false;
  int64_t s = 0;
  for (int i = 0; i < 12; ++i) {
    if (base[i] < '0' || base[i] > '9') return false;
    s = s * 10 + (base[i] - '0');
  }
  if (base[12] != '_') return false;
  *step = s;
  *worker = std::string(base.substr(13, base.size() - 13 - kExt.size()));
  return !worker->empty();
}

bool is_safe_relative_path(std::string_view p) {
  if (p.empty() || p.front() == '/' || p.find('\\') != std::string_view::npos ||
      p.find('\0') != std::string_view::npos || (p.size() > 1 && p[1] == ':'))
    return false;
  size_t i = 0;
  while (i <= p.size()) {
    size_t j = p.find('/', i);
    if (j == std::string_view::npos) j = p.size();
    std::string_view part = p.substr(i, j - i);
    if (part == ".." || part == "." || part.empty()) return false;
    i = j + 1;
  }
  return true;
}

namespace {
bool get_uint(const json& o, const char* key, uint64_t* out) {
  auto it = o.find(key);
  if (it == o.end() || !it->is_number_integer() || it->get<int64_t>() < 0) return false;
  *out = it->get<uint64_t>();
  return true;
}
// Checks entry i's tensorname; *why says what is wrong with it.
bool valid_name(const json& e, const char* list, size_t i, std::string* why) {
  std::string where = std::string("index ") + list + " entry " + std::to_string(i);
  auto it = e.is_object() ? e.find("tensorname") : e.end();
  if (!e.is_object() || it == e.end()) return *why = where + " has no tensorname", false;
  if (!it->is_string()) return *why = where + " has a tensorname that is not a string", false;
  size_t n = it->get_ref<const std::string&>().size();
  if (n == 0) return *why = where + " has an empty tensorname", false;
  if (n > kMaxTensorNameBytes)
    return *why = where + " has a tensorname of " + std::to_string(n) + " bytes (the limit is " +
                  std::to_string(kMaxTensorNameBytes) + ")", false;
  return true;
}
}  // namespace

bool parse_index_json(std::string_view text, IndexFile* out, std::string* err) {
  json doc = json::parse(text.begin(), text.end(), nullptr, false);
  if (doc.is_discarded()) return *err = "index file is not valid JSON", false;
  if (!doc.is_object()) return *err = "index file is not a JSON object", false;
  auto meta = doc.find("meta");
  if (meta == doc.end() || !meta->is_object()) return *err = "index file has no 'meta' object", false;
  auto mode = meta->find("mode");
  if (mode == meta->end() || !mode->is_string() || !parse_mode(mode->get<std::string>(), &out->mode))
    return *err = "index meta.mode is missing or not one of TRAIN/EVAL/PREDICT/GLOBAL", false;
  auto ms = meta->find("mode_step");
  if (ms == meta->end() || !ms->is_number_integer() || ms->get<int64_t>() < 0)
    return *err = "index meta.mode_step is missing or not a non-negative integer", false;
  out->mode_step = ms->get<int64_t>();
  auto ef = meta->find("event_file_name");
  if (ef != meta->end() && !ef->is_null()) {
    if (!ef->is_string()) return *err = "index meta.event_file_name is not a string", false;
    std::string name = ef->get<std::string>();
    if (!is_safe_relative_path(name))
      return *err = "index meta.event_file_name '" + name.substr(0, 200) + "' points outside the trial", false;
    out->event_file = name;
  }
  if (auto tp = doc.find("tensor_payload"); tp != doc.end() && !tp->is_null()) {
    if (!tp->is_array()) return *err = "index tensor_payload is not an array", false;
    for (size_t i = 0; i < tp->size(); ++i) {
      const json& e = (*tp)[i];
      IndexEntry ie;
      std::string why;
      if (!valid_name(e, "tensor_payload", i, &why)) {
        out->skipped.push_back(std::move(why));   // one bad entry costs only that tensor
        continue;
      }
      ie.tensor = e["tensorname"].get<std::string>();
      if (!get_uint(e, "start_idx", &ie.start) || !get_uint(e, "length", &ie.length)) {
        out->skipped.push_back("index entry for '" + ie.tensor + "' has no valid start_idx/length");
        continue;
      }
      out->tensors.push_back(std::move(ie));
    }
    if (!out->tensors.empty() && !out->event_file)
      return *err = "index lists tensors but meta has no event_file_name", false;
  }
  if (auto sp = doc.find("shape_payload"); sp != doc.end() && !sp->is_null()) {
    if (!sp->is_array()) return *err = "index shape_payload is not an array", false;
    for (size_t i = 0; i < sp->size(); ++i) {
      const json& e = (*sp)[i];
      ShapeEntry se;
      std::string why;
      if (!valid_name(e, "shape_payload", i, &why)) {
        out->skipped.push_back(std::move(why));
        continue;
      }
      se.tensor = e["tensorname"].get<std::string>();
      auto sh = e.find("shape");
      if (sh == e.end() || !sh->is_array() || sh->size() > 32) {
        out->skipped.push_back("index shape_payload entry for '" + se.tensor + "' has no valid shape");
        continue;
      }
      bool ok = true;
      for (const auto& d : *sh) {
        if (!d.is_number_integer() || d.get<int64_t>() < 0) {
          out->skipped.push_back("index shape for '" + se.tensor + "' has a non-integer or negative dimension");
          ok = false;
          break;
        }
        se.shape.push_back(d.get<int64_t>());
      }
      if (ok) out->shapes.push_back(std::move(se));
    }
  }
  return true;
}

}  // namespace trialdb
