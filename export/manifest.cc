// The per-trial export manifest (manifest.h).
#include "export/manifest.h"

#include <cctype>

#include <nlohmann/json.hpp>

#include "export/public_tables.h"
#include "schema/status.h"

namespace trialdb::exporter {

namespace {

using nlohmann::json;

constexpr int kFormat = 2;
constexpr const char* kPartPrefix = "part-";
constexpr const char* kPartSuffix = ".parquet";
constexpr size_t kBadEntriesNamed = 5;  // a message names this many bad paths, then counts the rest

// Hive's FileUtils.escapePathName set: control characters, DEL and "#%'*/:=?\{[]^ become %XX.
bool hive_escapes(unsigned char c) {
  if (c < 0x20 || c == 0x7f) return true;
  for (char e : std::string_view("\"#%'*/:=?\\{[]^"))
    if (c == static_cast<unsigned char>(e)) return true;
  return false;
}

// Partition values engines read as SQL NULL rather than as the name (DuckDB: both, in any case;
// Hive, Trino, Spark: the second).
bool read_as_null(const std::string& trial) {
  std::string lower = trial;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return lower == "null" || lower == "__hive_default_partition__";
}

json file_json(const ExportedFile& f, bool by_steps) {
  json j = {{"path", f.path}, {"rows", f.rows}, {"bytes", f.bytes}, {"crc32", f.crc32}};
  if (by_steps) {
    j["after_step"] = f.after_step;
    j["through_step"] = f.through_step;
  }
  return j;
}

ExportedFile parse_file(const json& j) {
  ExportedFile f;
  f.path = j.at("path").get<std::string>();
  f.rows = j.at("rows").get<int64_t>();
  f.bytes = j.at("bytes").get<uint64_t>();
  f.crc32 = j.at("crc32").get<uint32_t>();
  if (j.contains("after_step")) f.after_step = j["after_step"].get<int64_t>();
  if (j.contains("through_step")) f.through_step = j["through_step"].get<int64_t>();
  return f;
}

bool is_digits(std::string_view s) { return !s.empty() && s.find_first_not_of("0123456789") == std::string_view::npos; }

// Whether `path` is `<table>/trial=<name>/part-<n>.parquet` of this trial and a public table
// (of `table` when given): a plain file name inside its own table's partition, nothing else.
bool is_part_path(const std::string& path, const std::string& trial, const std::string* table) {
  std::string folder(1, '/');  // appended: `"/" + name + "/"` trips GCC 12's -Wrestrict at -O3
  folder += partition_folder(trial);
  folder += '/';
  const size_t at = path.find(folder);
  if (at == std::string::npos) return false;
  const std::string owner = path.substr(0, at);
  if (table ? owner != *table : !find_public_table(owner)) return false;
  const std::string_view name = std::string_view(path).substr(at + folder.size());
  const std::string_view prefix(kPartPrefix), suffix(kPartSuffix);
  if (name.size() <= prefix.size() + suffix.size() || name.substr(0, prefix.size()) != prefix ||
      name.substr(name.size() - suffix.size()) != suffix)
    return false;
  return is_digits(name.substr(prefix.size(), name.size() - prefix.size() - suffix.size()));
}

// Collects the manifest's paths that are not part files of their partition; reports them all
// at once (the first few by name).
class PathCheck {
 public:
  PathCheck(const std::string& trial, const std::string& where) : trial_(trial), where_(where) {}
  void check(const std::string& path, const std::string* table) {
    if (is_part_path(path, trial_, table)) return;
    if (bad_++ < kBadEntriesNamed) named_ += std::string(named_.empty() ? "" : ", ") + "'" + path + "'";
  }
  void report() const {
    if (!bad_) return;
    throw Error(ErrorKind::kInvalidInput,
                "the manifest lists " + std::to_string(bad_) +
                    " path(s) that are not part files of their table's "
                    "partition of trial '" +
                    trial_ + "' (" + named_ + (bad_ > kBadEntriesNamed ? ", ..." : "") +
                    "); nothing was written or removed",
                where_);
  }

 private:
  const std::string& trial_;
  const std::string& where_;
  size_t bad_ = 0;
  std::string named_;
};

}  // namespace

std::string partition_folder(const std::string& trial) {
  static const char* hex = "0123456789ABCDEF";
  std::string out = "trial=";
  for (size_t i = 0; i < trial.size(); ++i) {
    const auto c = static_cast<unsigned char>(trial[i]);
    if (hive_escapes(c) || (i == 0 && read_as_null(trial))) {
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
  return table + "/" + partition_folder(trial) + "/" + kPartPrefix + std::to_string(part) + kPartSuffix;
}

Manifest Manifest::parse_at(const std::string& text, const std::string& path, const std::string& where) {
  std::string trial;
  try {
    trial = json::parse(text).at("trial").get<std::string>();
  } catch (const json::exception& e) {
    throw Error(ErrorKind::kInvalidInput, std::string("not an export manifest: ") + e.what(), where);
  }
  if (manifest_path(trial) != path)
    throw Error(ErrorKind::kInvalidInput,
                "the manifest of trial '" + trial + "' is not where that trial's is (" + manifest_path(trial) + ")",
                where);
  return parse(text, trial, where);
}

Manifest Manifest::parse(const std::string& text, const std::string& trial, const std::string& where) {
  Manifest m;
  try {
    const json j = json::parse(text);
    if (!j.contains("format") || j["format"].get<int>() != kFormat)
      throw Error(
          ErrorKind::kInvalidInput,
          "not an export manifest of this trialdb (format " + std::to_string(kFormat) + "): export into a new folder",
          where);
    m.trial = j.at("trial").get<std::string>();
    if (m.trial != trial) throw Error(ErrorKind::kInvalidInput, "the manifest is of trial '" + m.trial + "'", where);
    m.trial_uid = j.at("trial_uid").get<std::string>();
    m.database_uid = j.at("database").at("uid").get<std::string>();
    m.database_path = j.at("database").at("path").get<std::string>();
    m.change_seq = j.at("change_seq").get<int64_t>();
    for (const json& p : j.at("pending")) m.pending.push_back(p.get<std::string>());
    for (const auto& [name, t] : j.at("tables").items()) {
      TableState s;
      s.through_step = t.at("through_step").get<int64_t>();
      s.next_part = t.at("next_part").get<int64_t>();
      for (const json& f : t.at("files")) s.files.push_back(parse_file(f));
      m.tables[name] = std::move(s);
    }
  } catch (const json::exception& e) {
    throw Error(ErrorKind::kInvalidInput, std::string("not an export manifest: ") + e.what(), where);
  }
  PathCheck paths(trial, where);
  for (const std::string& p : m.pending) paths.check(p, nullptr);
  for (const auto& [name, s] : m.tables)
    for (const ExportedFile& f : s.files) paths.check(f.path, &name);
  paths.report();
  return m;
}

std::string Manifest::to_json() const {
  json tables_json = json::object();
  for (const auto& [name, s] : tables) {
    const PublicTable* table = find_public_table(name);
    const bool by_steps = table && !table->global_step.empty();
    json files = json::array();
    for (const ExportedFile& f : s.files) files.push_back(file_json(f, by_steps));
    tables_json[name] = {{"through_step", s.through_step}, {"next_part", s.next_part}, {"files", files}};
  }
  return json({{"format", kFormat},
               {"trial", trial},
               {"trial_uid", trial_uid},
               {"database", {{"uid", database_uid}, {"path", database_path}}},
               {"change_seq", change_seq},
               {"pending", pending},
               {"tables", tables_json}})
             .dump(1) +
         "\n";
}

}  // namespace trialdb::exporter
