#include "ingest/pipeline/value_size_sample.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "ingest/format/index_file.h"
#include "ingest/format/index_file_writer.h"
#include "ingest/pipeline/prepare_file.h"
#include "ingest/pipeline/value_writer.h"

namespace trialdb {

PageSizeSample sample_value_sizes(TrialSource& source) {
  std::vector<std::string> index_files;
  for (const SourceFile& f : source.list(index_folder_name(0))) {
    int64_t step = 0;
    std::string worker;
    if (f.problem.is_ok() && parse_index_path(f.path, &step, &worker)) index_files.push_back(f.path);
  }
  PageSizeSample sample;
  const size_t n = index_files.size(), taken = std::min(n, kSampledIndexFiles);
  for (size_t i = 0; i < taken; ++i) {
    std::optional<ReadBuffer> text;
    IndexFile index;
    if (!read_at_most(source, index_files[i * n / taken], kMaxIndexFileBytes, &text).is_ok() || !text ||
        !parse_index_json(text->view(), &index).is_ok())
      continue;
    sample.max_values_per_step = std::max<uint64_t>(sample.max_values_per_step, index.tensors.size());
    for (const IndexEntry& e : index.tensors)
      if (e.length > ValueWriter::kInlineBlobBytes) sample.blob_bytes.push_back(e.length);
  }
  return sample;
}

}  // namespace trialdb
