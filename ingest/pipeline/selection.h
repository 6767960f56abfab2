// What an ingest with a selection stores (smdebug's range_steps, tensor regex and collections):
// the steps of a range, and the tensors whose name matches a Python regex or that belong to one
// of the named collections. Files of other steps are not read; records of other tensors are not
// read either (on S3 their bytes are never transferred). Whatever is left out is read by a later
// run whose selection includes it (file_ledger.h: partial files).
//
// Asked from the preparing threads: matches are made under a lock, once per tensor name.
#pragma once
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "schema/py_regex.h"
#include "schema/status.h"

namespace trialdb {

class Catalog;

// The selection as asked on the command line.
struct SelectionSpec {
  std::optional<int64_t> first_step;  // --steps A:B selects A <= step < B (Python's range)
  std::optional<int64_t> end_step;
  std::string tensor_regex;              // --tensors: Python re.search; empty = not given
  std::vector<std::string> collections;  // --collections

  bool whole() const { return !first_step && !end_step && tensor_regex.empty() && collections.empty(); }
  bool selects_all_tensors() const { return tensor_regex.empty() && collections.empty(); }
};

// Parses "A:B", "A:" or ":B" (steps, A < B) into spec; an error says what is wrong.
Status parse_step_range(const std::string& text, SelectionSpec* spec);

class Selection {
 public:
  // Compiles the regex and takes the named collections' definitions from the catalog (after its
  // collections files were read). A regex that does not compile, or a collection the trial does
  // not define, is an error (kUsage) naming it.
  Selection(const SelectionSpec& spec, const Catalog& catalog);

  bool whole() const { return spec_.whole(); }
  // The selection as text (the range, the regex, each collection's tensor names and patterns):
  // equal keys select the same records of any file.
  const std::string& key() const { return key_; }
  bool selects_step(int64_t step) const {
    return (!spec_.first_step || step >= *spec_.first_step) && (!spec_.end_step || step < *spec_.end_step);
  }
  // Thread-safe. A match past the regex limits selects nothing (the tensor is not read).
  bool selects_tensor(const std::string& name) const;

 private:
  bool matches(const std::string& name) const;

  SelectionSpec spec_;
  std::string key_;
  std::unique_ptr<PyRegex> regex_;
  std::set<std::string> member_names_;                    // the collections' listed tensor names
  std::vector<std::unique_ptr<PyRegex>> member_regexes_;  // and their include_regex patterns
  mutable std::mutex mutex_;
  mutable std::unordered_map<std::string, bool> decided_;
};

}  // namespace trialdb
