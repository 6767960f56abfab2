// line_cache.h
#include "src/serve/line_cache.h"

namespace trialdb::serve {

std::shared_ptr<const SeriesByMode> LineCache::find(const std::string& key, const std::string& version) {
  std::lock_guard lock(mutex_);
  auto it = entries_.find(key);
  return it != entries_.end() && it->second.version == version ? it->second.line : nullptr;
}

void LineCache::put(const std::string& key, const std::string& version, std::shared_ptr<const SeriesByMode> line) {
  size_t points = 0;
  for (const auto& [mode, s] : *line) points += s.steps.size();
  std::lock_guard lock(mutex_);
  if (auto it = entries_.find(key); it != entries_.end()) {
    points_ -= it->second.points;
    entries_.erase(it);
  }
  if (points_ + points > kMaxCachedPoints) {
    entries_.clear();
    points_ = 0;
  }
  if (points > kMaxCachedPoints) return;
  entries_[key] = {version, std::move(line), points};
  points_ += points;
}

}  // namespace trialdb::serve
