// Where trialdb writes a file before renaming it into place: ".<name>.tmp" beside it. Beside, so
// the rename stays on one file system; hidden and with another suffix, so that a reader listing
// the folder (a Parquet dataset, TensorBoard's run folder) never takes a half-written file for a
// finished one. The Parquet export (export/local_target.cc) and the TensorBoard export's state
// file (tensorboard/tensorboard_export.cc) both name theirs here.
//
//   temp_path_of("out/tensors/part-0.parquet") -> "out/tensors/.part-0.parquet.tmp"
#pragma once
#include <filesystem>
#include <string>

namespace trialdb {

inline std::filesystem::path temp_path_of(const std::filesystem::path& final_path) {
  // Appended rather than `"." + name + ".tmp"`, which GCC 12 at -O3 warns about (-Wrestrict
  // through basic_string::_M_replace, GCC bug 105329).
  std::string name(1, '.');
  name += final_path.filename().string();
  name += ".tmp";
  return final_path.parent_path() / name;
}

}  // namespace trialdb
