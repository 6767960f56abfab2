// The lines of /api/scalars at full resolution, kept between requests: reading them costs about
// 0.5 us a step (schema/reduction_lines.h), so a 40-line chart of 10,000 steps is read once and
// then redrawn (smoothing, a step range, a live poll that found nothing new) from memory.
// An entry is used only under the same version (its trial's complete steps, end and tensors)
// and while the stored value at its last step is still the one cached (a trial removed and
// ingested again under its name). Memory is bounded: past kMaxCachedPoints the cache starts over.
#pragma once
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "src/serve/series.h"

namespace trialdb::serve {

using SeriesByMode = std::map<std::string, Series>;

class LineCache {
 public:
  static constexpr size_t kMaxCachedPoints = 4'000'000;

  // The cached line, or null when there is none for this key and version.
  std::shared_ptr<const SeriesByMode> find(const std::string& key, const std::string& version);
  void put(const std::string& key, const std::string& version, std::shared_ptr<const SeriesByMode> line);

 private:
  struct Entry {
    std::string version;
    std::shared_ptr<const SeriesByMode> line;
    size_t points = 0;
  };
  std::mutex mutex_;
  std::map<std::string, Entry> entries_;
  size_t points_ = 0;
};

}  // namespace trialdb::serve
