// UidMemo: the newest `capacity` UIDs remembered (a set that forgets its
// oldest entries), for what a component knows of objects its cache may not
// show yet or any more: claims the claim controller deleted, pods it saw
// deleted, claims the scheduler saw deleted while a write of theirs was in
// flight.
//
// Thread-safety: none; the owner locks.
#pragma once

#include <deque>
#include <unordered_set>
#include <string>

namespace draplane::common {

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
  std::unordered_set<std::string> uids_;
  std::deque<std::string> order_;  // oldest first
};

}  // namespace draplane::common
