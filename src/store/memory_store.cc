#include "store/memory_store.h"

#include <algorithm>
#include <map>
#include <mutex>

#include "store/internal/watch_hub.h"

namespace draplane::store {

std::string prefix_end(std::string_view prefix) {
  std::string end(prefix);
  while (!end.empty()) {
    unsigned char c = static_cast<unsigned char>(end.back());
    if (c != 0xff) {
      end.back() = static_cast<char>(c + 1);
      return end;
    }
    end.pop_back();
  }
  return end;
}

namespace {

struct Rec {
  int64_t rev = 0;
  int64_t create_rev = 0;
  int64_t version = 0;
  bool deleted = false;
  std::string value;
};

class MemoryStore final : public Store {
 public:
  int64_t current_revision() override {
    std::lock_guard<std::mutex> lock(mu_);
    return rev_;
  }
  int64_t compacted_revision() override {
    std::lock_guard<std::mutex> lock(mu_);
    return compacted_;
  }

  Result<KeyValue> get(std::string_view key, int64_t revision) override {
    std::lock_guard<std::mutex> lock(mu_);
    ASSIGN_OR_RETURN(int64_t at, read_revision(revision));
    auto it = keys_.find(std::string(key));
    if (it == keys_.end()) return not_found(key);
    const Rec* r = visible(it->second, at);
    if (r == nullptr) return not_found(key);
    return to_kv(it->first, *r);
  }

  Result<ListResult> list(std::string_view prefix, const ListOptions& opts) override {
    std::lock_guard<std::mutex> lock(mu_);
    ASSIGN_OR_RETURN(int64_t at, read_revision(opts.revision));
    ListResult out;
    out.revision = at;
    std::string start(prefix);
    auto it = keys_.lower_bound(start);
    if (!opts.start_after.empty() && opts.start_after >= start) it = keys_.upper_bound(opts.start_after);
    for (; it != keys_.end(); ++it) {
      if (it->first.compare(0, prefix.size(), prefix) != 0) break;
      const Rec* r = visible(it->second, at);
      if (r == nullptr) continue;
      if (opts.limit > 0 && static_cast<int64_t>(out.items.size()) >= opts.limit) {
        out.more = true;
        ++out.remaining;
        continue;
      }
      out.items.push_back(to_kv(it->first, *r));
    }
    return out;
  }

  Result<KeyValue> create(std::string_view key, std::string_view value) override {
    std::lock_guard<std::mutex> lock(mu_);
    auto& recs = keys_[std::string(key)];
    if (!recs.empty() && !recs.back().deleted) {
      return Status(Code::kAlreadyExists, "key already exists: " + std::string(key));
    }
    std::optional<KeyValue> none;
    int64_t rev = ++rev_;
    recs.push_back(Rec{rev, rev, 1, false, std::string(value)});
    KeyValue kv = to_kv(std::string(key), recs.back());
    append_event(Event{EventType::kPut, kv, none});
    return kv;
  }

  Result<WriteResult> update(std::string_view key, std::string_view value, int64_t expected) override {
    std::lock_guard<std::mutex> lock(mu_);
    ASSIGN_OR_RETURN(Live cur, live(key));
    if (expected != 0 && expected != cur.rec.rev) return WriteResult{false, cur.kv, 0};
    int64_t rev = ++rev_;
    cur.recs->push_back(Rec{rev, cur.rec.create_rev, cur.rec.version + 1, false, std::string(value)});
    KeyValue kv = to_kv(cur.kv.key, cur.recs->back());
    append_event(Event{EventType::kPut, kv, cur.kv});
    return WriteResult{true, kv, rev};
  }

  Result<WriteResult> remove(std::string_view key, int64_t expected) override {
    std::lock_guard<std::mutex> lock(mu_);
    ASSIGN_OR_RETURN(Live cur, live(key));
    if (expected != 0 && expected != cur.rec.rev) return WriteResult{false, cur.kv, 0};
    int64_t rev = ++rev_;
    cur.recs->push_back(Rec{rev, 0, 0, true, ""});
    KeyValue tomb{cur.kv.key, "", 0, rev, 0};
    append_event(Event{EventType::kDelete, tomb, cur.kv});
    return WriteResult{true, cur.kv, rev};
  }

  Result<std::unique_ptr<WatchHandle>> watch(std::string_view prefix, int64_t start,
                                             WatchCallback callback) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (start == 0) start = rev_ + 1;
    if (start <= compacted_) return too_old(start);
    if (start > rev_ + 1) return Status(Code::kInvalid, "watch revision " + std::to_string(start) + " is in the future");
    std::vector<Event> history;
    // log_ is sorted by revision; find the first event at or after `start`.
    auto it = std::lower_bound(log_.begin(), log_.end(), start,
                               [](const Event& e, int64_t r) { return e.kv.mod_revision < r; });
    for (; it != log_.end(); ++it) {
      if (it->kv.key.compare(0, prefix.size(), prefix) == 0) history.push_back(*it);
    }
    return hub_.add(std::string(prefix), std::move(history), rev_, std::move(callback));
  }

  Status compact(int64_t revision) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (revision > rev_) return Status(Code::kInvalid, "compact revision " + std::to_string(revision) + " is in the future");
    if (revision <= compacted_) return Status();
    compacted_ = revision;
    for (auto it = keys_.begin(); it != keys_.end();) {
      auto& recs = it->second;
      // Keep the newest record at or below `revision` (unless it is a tombstone)
      // and everything after it.
      size_t keep = 0;
      for (size_t i = 0; i < recs.size(); ++i) {
        if (recs[i].rev <= revision) keep = i;
      }
      if (!recs.empty() && recs[keep].rev <= revision) {
        size_t from = recs[keep].deleted ? keep + 1 : keep;
        recs.erase(recs.begin(), recs.begin() + static_cast<std::ptrdiff_t>(from));
      }
      if (recs.empty()) {
        it = keys_.erase(it);
      } else {
        ++it;
      }
    }
    auto cut = std::lower_bound(log_.begin(), log_.end(), revision + 1,
                                [](const Event& e, int64_t r) { return e.kv.mod_revision < r; });
    log_.erase(log_.begin(), cut);
    return Status();
  }

 private:
  static Status not_found(std::string_view key) {
    return Status(Code::kNotFound, "key not found: " + std::string(key));
  }
  static Status too_old(int64_t rev) {
    return Status(Code::kGone, "too old resource version: " + std::to_string(rev));
  }
  Result<int64_t> read_revision(int64_t revision) const {
    if (revision == 0) return rev_;
    if (revision < compacted_) return too_old(revision);
    if (revision > rev_) return Status(Code::kInvalid, "revision " + std::to_string(revision) + " is in the future");
    return revision;
  }
  static const Rec* visible(const std::vector<Rec>& recs, int64_t at) {
    for (auto it = recs.rbegin(); it != recs.rend(); ++it) {
      if (it->rev <= at) return it->deleted ? nullptr : &*it;
    }
    return nullptr;
  }
  static KeyValue to_kv(const std::string& key, const Rec& r) {
    return KeyValue{key, r.value, r.create_rev, r.rev, r.version};
  }
  // The live (not deleted) record at `key` that a conditional write replaces.
  struct Live {
    std::vector<Rec>* recs;
    Rec rec;      // its latest record
    KeyValue kv;  // that record as read
  };
  Result<Live> live(std::string_view key) {
    auto it = keys_.find(std::string(key));
    if (it == keys_.end() || it->second.empty() || it->second.back().deleted) return not_found(key);
    return Live{&it->second, it->second.back(), to_kv(it->first, it->second.back())};
  }
  void append_event(Event ev) {
    log_.push_back(ev);
    hub_.publish(std::move(ev));
  }

  std::mutex mu_;
  int64_t rev_ = 1;
  int64_t compacted_ = 0;
  std::map<std::string, std::vector<Rec>> keys_;
  std::vector<Event> log_;
  internal::WatchHub hub_;  // last: destroyed first, while the maps are alive
};

}  // namespace

std::unique_ptr<Store> new_memory_store() { return std::make_unique<MemoryStore>(); }

}  // namespace draplane::store
