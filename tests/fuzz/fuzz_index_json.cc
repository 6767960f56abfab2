// libFuzzer target: index file parsing (JSON from a trial, possibly hostile) and index paths.
// Whatever parses must be safe to follow: the event file stays inside the trial, every tensor
// name is a bounded non-empty string, shapes are non-negative and at most 32-d.
#include <cstdint>
#include <string>
#include <string_view>

#include "ingest/format/index_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace trialdb;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  IndexFile idx;
  const Status st = parse_index_json(text, &idx);
  if (st.is_ok()) {
    if (idx.event_file && !is_safe_relative_path(*idx.event_file)) __builtin_trap();
    if (!idx.tensors.empty() && !idx.event_file) __builtin_trap();
    if (idx.mode_step < 0) __builtin_trap();
    for (const auto& s : idx.shapes) {
      if (s.shape.size() > 32) __builtin_trap();
      for (int64_t d : s.shape)
        if (d < 0) __builtin_trap();
    }
  } else if (st.kind() != ErrorKind::kInvalidInput || st.cause().empty()) {
    __builtin_trap();
  }
  // The same bytes as a file name and as an event_file_name.
  int64_t step = -1;
  std::string worker;
  if (parse_index_path(text, &step, &worker) && (step < 0 || worker.empty())) __builtin_trap();
  if (is_safe_relative_path(text) &&
      (text.front() == '/' || text == ".." || text.substr(0, 3) == "../" ||
       text.find("/../") != std::string_view::npos || (text.size() >= 3 && text.substr(text.size() - 3) == "/..")))
    __builtin_trap();
  return 0;
}
