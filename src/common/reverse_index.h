// ReverseIndex: a many-to-many relation kept in both directions. Each key (an
// object) names a set of values (its owners, the claims it uses); each value
// finds the keys that name it. Replacing what a key names unindexes what it
// named before, without the caller remembering it.
//
// Thread-safety: none; callers lock.
#pragma once

#include <map>
#include <set>

namespace draplane::common {

template <class Key, class Value>
class ReverseIndex {
 public:
  // Makes `key` name exactly `values` (none: the key is forgotten).
  template <class Range>
  void set(const Key& key, const Range& values) {
    erase(key);
    std::set<Value> named;
    for (const auto& v : values) {
      keys_[v].insert(key);
      named.insert(v);
    }
    if (!named.empty()) values_.emplace(key, std::move(named));
  }

  // Forgets `key` and what it named.
  void erase(const Key& key) {
    auto was = values_.find(key);
    if (was == values_.end()) return;
    for (const auto& v : was->second) {
      auto it = keys_.find(v);
      if (it == keys_.end()) continue;
      it->second.erase(key);
      if (it->second.empty()) keys_.erase(it);
    }
    values_.erase(was);
  }

  // The keys that name `value` (empty when none).
  const std::set<Key>& keys_of(const Value& value) const {
    static const std::set<Key> kNone;
    auto it = keys_.find(value);
    return it == keys_.end() ? kNone : it->second;
  }

 private:
  std::map<Key, std::set<Value>> values_;  // key -> the values it names
  std::map<Value, std::set<Key>> keys_;    // value -> the keys naming it
};

}  // namespace draplane::common
