// libFuzzer target: collections file parsing, then what the ingester does with a parsed file:
// compile every include_regex (Python syntax on PCRE2) and match it against the tensor names.
#include <cstdint>
#include <string>
#include <string_view>

#include "ingest/format/collections_file.h"
#include "schema/py_regex.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace trialdb;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  CollectionsFile cf;
  if (const Status st = parse_collections_json(text, &cf); !st.is_ok()) {
    if (st.kind() != ErrorKind::kInvalidInput || st.cause().empty()) __builtin_trap();
    return 0;
  }
  if (cf.num_workers < 0) __builtin_trap();
  size_t budget = 64;  // regexes per input: keeps each run short
  for (const auto& c : cf.collections) {
    for (const auto& pattern : c.include_regex) {
      if (budget-- == 0) return 0;
      std::unique_ptr<PyRegex> re;
      const Status rst = PyRegex::compile(pattern, &re);
      if (!rst.is_ok() != !re) __builtin_trap();  // a regex exactly when OK
      if (!re) {
        if (rst.cause().empty()) __builtin_trap();
        continue;
      }
      for (const auto& name : c.tensor_names) (void)re->search(name.substr(0, 256));
      (void)re->search(c.name.substr(0, 256));
    }
  }
  (void)is_collections_path(text);
  return 0;
}
