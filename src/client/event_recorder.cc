#include "client/event_recorder.h"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <cstdio>

#include "common/rfc3339.h"

namespace draplane::client {
namespace {

using TimePoint = std::chrono::system_clock::time_point;
using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

// tools/events finishes a series when no repeat came for this long.
constexpr std::chrono::minutes kSeriesFinish{6};
// What validation allows an event's note (and kube-scheduler truncates to).
constexpr size_t kMaxNote = 1024;

void str(Writer& w, const char* key, const std::string& value) {
  w.Key(key);
  w.String(value.c_str(), static_cast<rapidjson::SizeType>(value.size()));
}

void reference(Writer& w, const char* key, const ObjectReference& r) {
  w.Key(key);
  w.StartObject();
  auto opt = [&](const char* k, const std::string& v) {
    if (!v.empty()) str(w, k, v);
  };
  opt("kind", r.kind);
  opt("namespace", r.namespace_);
  opt("name", r.name);
  opt("uid", r.uid);
  opt("apiVersion", r.api_version);
  opt("resourceVersion", r.resource_version);
  opt("fieldPath", r.field_path);
  w.EndObject();
}

std::string ref_key(const ObjectReference& r) {
  return r.kind + '\x1f' + r.namespace_ + '\x1f' + r.name + '\x1f' + r.uid + '\x1f' + r.api_version + '\x1f' +
         r.field_path;
}

std::string truncated(std::string note) {
  if (note.size() > kMaxNote) note = note.substr(0, kMaxNote - 3) + "...";
  return note;
}

}  // namespace

ObjectReference container_reference(const ObjectReference& pod, const std::string& container) {
  ObjectReference r = pod;
  r.field_path = "spec.containers{" + container + "}";
  return r;
}

EventRecorder::EventRecorder(RestClient& client, EventRecorderOptions options)
    : client_(client), options_(std::move(options)) {
  worker_ = std::thread([this] { run(); });
}

EventRecorder::~EventRecorder() { stop(); }

TimePoint EventRecorder::now() const { return options_.clock->wall(); }

void EventRecorder::record(const ObjectReference& regarding, std::string type, std::string reason, std::string action,
                           std::string note, std::string reporting_controller, std::string reporting_instance) {
  Pending p{regarding,
            std::move(type),
            std::move(reason),
            std::move(action),
            truncated(std::move(note)),
            reporting_controller.empty() ? options_.component : std::move(reporting_controller),
            reporting_instance.empty() ? options_.instance : std::move(reporting_instance),
            now()};
  {
    std::lock_guard<std::mutex> l(mu_);
    if (stop_ || queue_.size() >= options_.queue_capacity) {
      ++stats_.dropped_full;
      return;
    }
    ++stats_.recorded;
    queue_.push_back(std::move(p));
  }
  cv_.notify_one();
}

EventRecorder::Stats EventRecorder::stats() const {
  std::lock_guard<std::mutex> l(mu_);
  return stats_;
}

void EventRecorder::flush() {
  std::unique_lock<std::mutex> l(mu_);
  idle_cv_.wait(l, [this] { return queue_.empty() && !busy_; });
}

void EventRecorder::stop() {
  {
    std::lock_guard<std::mutex> l(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (worker_.joinable()) worker_.join();
}

void EventRecorder::run() {
  std::unique_lock<std::mutex> l(mu_);
  for (;;) {
    cv_.wait(l, [this] { return stop_ || !queue_.empty(); });
    if (queue_.empty()) {
      if (stop_) break;
      continue;
    }
    Pending p = std::move(queue_.front());
    queue_.pop_front();
    busy_ = true;
    l.unlock();
    write(p);
    l.lock();
    busy_ = false;
    if (queue_.empty()) idle_cv_.notify_all();
  }
  idle_cv_.notify_all();
}

bool EventRecorder::allow(const std::string& spam_key, TimePoint at) {
  auto pos = bucket_pos_.find(spam_key);
  if (pos == bucket_pos_.end()) {
    if (bucket_pos_.size() >= options_.cache_size) {
      buckets_.erase(bucket_lru_.back());
      bucket_pos_.erase(bucket_lru_.back());
      bucket_lru_.pop_back();
    }
    bucket_lru_.push_front(spam_key);
    bucket_pos_[spam_key] = bucket_lru_.begin();
    buckets_[spam_key] = Bucket{static_cast<double>(options_.spam_burst), at};
  } else {
    bucket_lru_.splice(bucket_lru_.begin(), bucket_lru_, pos->second);
  }
  Bucket& b = buckets_[spam_key];
  double elapsed = std::chrono::duration<double>(at - b.refilled).count();
  if (elapsed > 0 && options_.spam_refill_seconds > 0) {
    b.tokens = std::min<double>(options_.spam_burst, b.tokens + elapsed / options_.spam_refill_seconds);
    b.refilled = at;
  }
  if (b.tokens < 1) return false;
  b.tokens -= 1;
  return true;
}

std::string EventRecorder::new_name(const std::string& object_name, TimePoint at) {
  // client-go names an event <object>.<hex Unix nanoseconds>; two events in
  // the same nanosecond (a coarse injected clock) still get distinct names.
  int64_t nanos = std::chrono::duration_cast<std::chrono::nanoseconds>(at.time_since_epoch()).count();
  nanos = std::max(nanos, last_nanos_ + 1);
  last_nanos_ = nanos;
  char hex[24];
  std::snprintf(hex, sizeof hex, "%llx", static_cast<unsigned long long>(nanos));
  return object_name + "." + hex;
}

Path EventRecorder::collection_path(const std::string& ns) const {
  return (options_.api == EventRecorderOptions::Api::kEventsV1 ? resources::kEventsV1 : resources::kEvents).ns(ns);
}

std::string EventRecorder::create_body(const Pending& p, const std::string& ns, const std::string& name) const {
  rapidjson::StringBuffer buf;
  Writer w(buf);
  w.StartObject();
  const bool v1 = options_.api == EventRecorderOptions::Api::kEventsV1;
  str(w, "apiVersion", v1 ? "events.k8s.io/v1" : "v1");
  str(w, "kind", "Event");
  w.Key("metadata");
  w.StartObject();
  str(w, "name", name);
  str(w, "namespace", ns);
  w.EndObject();
  if (v1) {
    str(w, "eventTime", common::format_rfc3339_micro(p.at));
    str(w, "reportingController", p.controller);
    str(w, "reportingInstance", p.instance);
    str(w, "action", p.action);
    str(w, "reason", p.reason);
    reference(w, "regarding", p.regarding);
    if (!p.note.empty()) str(w, "note", p.note);
    str(w, "type", p.type);
  } else {
    reference(w, "involvedObject", p.regarding);
    str(w, "reason", p.reason);
    if (!p.note.empty()) str(w, "message", p.note);
    w.Key("source");
    w.StartObject();
    if (!p.controller.empty()) str(w, "component", p.controller);
    if (!p.instance.empty()) str(w, "host", p.instance);
    w.EndObject();
    str(w, "firstTimestamp", common::format_rfc3339(p.at));
    str(w, "lastTimestamp", common::format_rfc3339(p.at));
    w.Key("count");
    w.Int(1);
    str(w, "type", p.type);
    w.Key("eventTime");
    w.Null();
    str(w, "reportingComponent", p.controller);
    str(w, "reportingInstance", p.instance);
  }
  w.EndObject();
  return std::string(buf.GetString(), buf.GetSize());
}

void EventRecorder::remember(const std::string& key, Seen seen) {
  auto it = seen_.find(key);
  if (it != seen_.end()) {
    lru_.erase(it->second.lru);
    seen_.erase(it);
  } else if (seen_.size() >= options_.cache_size) {
    seen_.erase(lru_.back());
    lru_.pop_back();
  }
  lru_.push_front(key);
  seen.lru = lru_.begin();
  seen_.emplace(key, std::move(seen));
}

void EventRecorder::write(const Pending& p) {
  const bool v1 = options_.api == EventRecorderOptions::Api::kEventsV1;
  const std::string object = ref_key(p.regarding);
  const std::string source = p.controller + '\x1f' + p.instance;
  // What makes two events the same one: tools/events' eventKey, or the
  // EventCorrelator's dedup key.
  const std::string key = v1 ? object + '\x1f' + p.action + '\x1f' + p.reason + '\x1f' + p.controller
                             : source + '\x1f' + object + '\x1f' + p.type + '\x1f' + p.reason + '\x1f' + p.note;
  // getSpamKey: the source and the object, whatever its field path.
  const ObjectReference& o = p.regarding;
  const std::string spam_key =
      source + '\x1f' + o.kind + '\x1f' + o.namespace_ + '\x1f' + o.name + '\x1f' + o.uid + '\x1f' + o.api_version;
  auto fail = [&] {
    std::lock_guard<std::mutex> l(mu_);
    ++stats_.failed;
  };

  auto it = seen_.find(key);
  if (it != seen_.end() && v1 && p.at - it->second.last > kSeriesFinish) {
    lru_.erase(it->second.lru);
    seen_.erase(it);
    it = seen_.end();
  }
  if (it != seen_.end()) {
    Seen& s = it->second;
    ++s.count;
    s.last = std::max(s.last, p.at);
    lru_.splice(lru_.begin(), lru_, s.lru);
    if (!allow(spam_key, p.at)) {
      std::lock_guard<std::mutex> l(mu_);
      ++stats_.dropped_spam;
      return;
    }
    rapidjson::StringBuffer buf;
    Writer w(buf);
    w.StartObject();
    if (v1) {
      w.Key("series");
      w.StartObject();
      w.Key("count");
      w.Int64(s.count);
      str(w, "lastObservedTime", common::format_rfc3339_micro(s.last));
      w.EndObject();
    } else {
      w.Key("count");
      w.Int64(s.count);
      str(w, "lastTimestamp", common::format_rfc3339(s.last));
      if (!p.note.empty()) str(w, "message", p.note);
    }
    w.EndObject();
    auto r = client_.patch(collection_path(s.ns).name(s.name), std::string(buf.GetString(), buf.GetSize()),
                           v1 ? "application/merge-patch+json" : "application/strategic-merge-patch+json");
    if (r.has_value()) {
      std::lock_guard<std::mutex> l(mu_);
      ++stats_.aggregated;
      return;
    }
    if (r.error().code() != Code::kNotFound) {
      fail();
      return;
    }
    // Expired (or deleted) meanwhile: a new event takes its place.
    lru_.erase(s.lru);
    seen_.erase(it);
  } else if (!allow(spam_key, p.at)) {
    std::lock_guard<std::mutex> l(mu_);
    ++stats_.dropped_spam;
    return;
  }
  const std::string ns = p.regarding.namespace_.empty() ? "default" : p.regarding.namespace_;
  const std::string name = new_name(p.regarding.name, p.at);
  auto r = client_.post(collection_path(ns), create_body(p, ns, name));
  if (!r.has_value()) {
    fail();
    return;
  }
  remember(key, Seen{ns, name, 1, p.at, {}});
  std::lock_guard<std::mutex> l(mu_);
  ++stats_.created;
}

}  // namespace draplane::client
