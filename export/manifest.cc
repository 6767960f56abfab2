// The per-trial export manifest (manifest.h).
#include "export/manifest.h"

#include <nlohmann/json.hpp>

#include "schema/status.h"

namespace trialdb::exporter {

namespace {

using nlohmann::json;

constexpr const char* kManifestFolder = "_manifests";

// Hive's FileUtils.escapePathName set: control characters, DEL and "#%'*/:=?\{[]^ become %XX.
bool hive_escapes(unsigned char c) {
  if (c < 0x20 || c == 0x7f) return true;
  for (char e : std::string_view("\"#%'*/:=?\\{[]^"))
    if (c == static_cast<unsigned char>(e)) return true;
  return false;
}

json file_json(const ExportedFile& f) {
  json j = {{"path", f.path}, {"rows", f.rows}, {"bytes", f.bytes}, {"crc32", f.crc32}};
  if (f.first_step) j["first_step"] = *f.first_step;
  if (f.last_step) j["last_step"] = *f.last_step;
  return j;
}

ExportedFile parse_file(const json& j) {
  ExportedFile f;
  f.path = j.at("path").get<std::string>();
  f.rows = j.at("rows").get<int64_t>();
  f.bytes = j.at("bytes").get<uint64_t>();
  f.crc32 = j.at("crc32").get<uint32_t>();
  if (j.contains("first_step")) f.first_step = j["first_step"].get<int64_t>();
  if (j.contains("last_step")) f.last_step = j["last_step"].get<int64_t>();
  return f;
}

}  // namespace

std::string partition_folder(const std::string& trial) {
  static const char* hex = "0123456789ABCDEF";
  std::string out = "trial=";
  for (unsigned char c : trial) {
    if (hive_escapes(c)) {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

std::string manifest_path(const std::string& trial) {
  return std::string(kManifestFolder) + "/" + partition_folder(trial) + ".json";
}

std::string part_path(const std::string& table, const std::string& trial, int64_t part) {
  return table + "/" + partition_folder(trial) + "/part-" + std::to_string(part) + ".parquet";
}

Manifest Manifest::parse(const std::string& text, const std::string& trial, const std::string& where) {
  try {
    const json j = json::parse(text);
    Manifest m;
    m.trial = j.at("trial").get<std::string>();
    if (m.trial != trial) throw Error(ErrorKind::kInvalidInput, "the manifest is of trial '" + m.trial + "'", where);
    for (const auto& [name, t] : j.at("tables").items()) {
      TableState s;
      if (t.contains("through_step")) s.through_step = t["through_step"].get<int64_t>();
      s.next_part = t.at("next_part").get<int64_t>();
      for (const json& f : t.at("files")) s.files.push_back(parse_file(f));
      m.tables[name] = std::move(s);
    }
    return m;
  } catch (const json::exception& e) {
    throw Error(ErrorKind::kInvalidInput, std::string("not an export manifest: ") + e.what(), where);
  }
}

std::string Manifest::to_json() const {
  json tables_json = json::object();
  for (const auto& [name, s] : tables) {
    json files = json::array();
    for (const ExportedFile& f : s.files) files.push_back(file_json(f));
    json t = {{"next_part", s.next_part}, {"files", files}};
    if (s.through_step) t["through_step"] = *s.through_step;
    tables_json[name] = t;
  }
  return json({{"trial", trial}, {"tables", tables_json}}).dump(1) + "\n";
}

}  // namespace trialdb::exporter
