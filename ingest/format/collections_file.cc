#include "ingest/format/collections_file.h"

#include <nlohmann/json.hpp>

#include "schema/json_depth.h"

namespace trialdb {

using nlohmann::json;

bool is_collections_path(std::string_view p) {
  constexpr std::string_view kSuffix = "collections.json";
  return p.substr(0, 12) == "collections/" && p.size() >= kSuffix.size() &&
         p.substr(p.size() - kSuffix.size()) == kSuffix;
}

namespace {
// smdebug's collections nest five levels (file, collections, one collection, its configs, a
// mode's config); this leaves room for any definition a writer adds, and no more.
constexpr int kMaxCollectionsDepth = 64;

bool string_list(const json& o, const char* key, std::vector<std::string>* out) {
  auto it = o.find(key);
  if (it == o.end() || it->is_null()) return true;
  if (!it->is_array()) return false;
  for (const auto& s : *it) {
    if (!s.is_string()) return false;
    out->push_back(s.get<std::string>());
  }
  return true;
}
}  // namespace

Status parse_collections_json(std::string_view text, CollectionsFile* out) {
  json doc;
  if (Status st = parse_json_within_depth(text, kMaxCollectionsDepth, &doc); !st.is_ok())
    return st.prefixed("collections file: ");
  if (doc.is_discarded()) return Status::invalid("collections file is not valid JSON");
  if (!doc.is_object()) return Status::invalid("collections file is not a JSON object");
  auto cs = doc.find("collections");
  if (cs == doc.end() || !cs->is_object()) return Status::invalid("collections file has no 'collections' object");
  for (auto it = cs->begin(); it != cs->end(); ++it) {
    if (!it.value().is_object()) return Status::invalid("collection '" + it.key() + "' is not an object");
    CollectionDef c;
    c.name = it.key();
    if (!string_list(it.value(), "include_regex", &c.include_regex))
      return Status::invalid("collection '" + c.name + "': include_regex is not a list of strings");
    if (!string_list(it.value(), "tensor_names", &c.tensor_names))
      return Status::invalid("collection '" + c.name + "': tensor_names is not a list of strings");
    if (auto sc = it.value().find("save_config"); sc != it.value().end()) c.save_config = sc->dump();
    if (auto rc = it.value().find("reduction_config"); rc != it.value().end()) c.reduction_config = rc->dump();
    out->collections.push_back(std::move(c));
  }
  if (auto m = doc.find("_meta"); m != doc.end() && m->is_object()) {
    auto nw = m->find("num_workers");
    if (nw != m->end() && nw->is_number_integer() && nw->get<int64_t>() > 0 && nw->get<int64_t>() < 1000000)
      out->num_workers = static_cast<int>(nw->get<int64_t>());
  }
  return Status::ok();
}

}  // namespace trialdb
