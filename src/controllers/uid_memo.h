// UidMemo: the newest `capacity` UIDs remembered (a set that forgets its
// oldest entries), for what a controller knows of objects its cache may not
// show yet or any more: claims it deleted, pods it saw deleted.
//
// Thread-safety: none; the owner locks.
#pragma once

#include <deque>
#include <set>
#include <string>

namespace draplane::controllers {

class UidMemo {
 public:
  explicit UidMemo(size_t capacity) : capacity_(capacity) {}
  void add(const std::string& uid) {
    if (uid.empty() || !uids_.insert(uid).second) return;
    order_.push_back(uid);
    if (order_.size() > capacity_) {
      uids_.erase(order_.front());
      order_.pop_front();
    }
  }
  bool contains(const std::string& uid) const { return uids_.count(uid) != 0; }

 private:
  size_t capacity_;
  std::set<std::string> uids_;
  std::deque<std::string> order_;  // oldest first
};

}  // namespace draplane::controllers
