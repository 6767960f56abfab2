// CompiledCache: the few objects a connection compiled last from text (regular expressions),
// keyed by the text (aux_cache.h). No SQLite here.
#pragma once
#include <cstddef>
#include <list>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

namespace trialdb::sqlext {

// The kCapacity texts compiled last on one connection, most recently used first (a query uses a
// few patterns: a linear search of a short list beats hashing the text).
template <class T>
class CompiledCache {
 public:
  static constexpr size_t kCapacity = 16;

  std::shared_ptr<const T> find(std::string_view text) {
    for (auto it = entries_.begin(); it != entries_.end(); ++it)
      if (it->first == text) {
        entries_.splice(entries_.begin(), entries_, it);
        return entries_.front().second;
      }
    return nullptr;
  }
  void insert(std::string_view text, std::shared_ptr<const T> compiled) {
    entries_.emplace_front(std::string(text), std::move(compiled));
    if (entries_.size() > kCapacity) entries_.pop_back();
  }

  // For sqlite3_create_function_v2: a new cache as user data, and its destructor.
  static void* create() { return new CompiledCache<T>(); }
  static void destroy(void* p) { delete static_cast<CompiledCache<T>*>(p); }

 private:
  std::list<std::pair<std::string, std::shared_ptr<const T>>> entries_;
};

}  // namespace trialdb::sqlext
