// EventRecorder: writes Events about API objects the way client-go's recorders
// do, off the caller's thread.
//
// record() only enqueues (a bounded queue; an event that does not fit is
// dropped and counted), so scheduling and kubelet hot paths never wait on the
// API server. One worker thread turns the queue into writes:
//  - Api::kEventsV1 (client-go tools/events, what kube-scheduler uses): POST
//    /apis/events.k8s.io/v1 with eventTime, reportingController/Instance,
//    action, reason, regarding, note; a repeat of the same (regarding, related,
//    action, reason, reportingController) within 6 minutes of the last one
//    becomes a series: merge PATCH of series {count, lastObservedTime}.
//  - Api::kCoreV1 (client-go tools/record, what the kubelet and
//    kube-controller-manager use): POST /api/v1 with source {component, host},
//    firstTimestamp, lastTimestamp, count 1; a repeat of the same (source,
//    involvedObject, type, reason, message) increments count and moves
//    lastTimestamp (strategic merge PATCH), as the EventCorrelator's dedup does.
// A repeat whose event has gone (expired by --event-ttl, deleted) is created
// anew. Writes are rate-limited per source and involved object as
// EventSourceObjectSpamFilter does (a token bucket: 25 burst, one more every
// 5 minutes); a filtered write is counted, and the aggregated count still
// includes it the next time a write goes through.
//
// Thread-safety: record() and stats() from any thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <list>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>

#include "client/resource_path.h"
#include "client/rest_client.h"
#include "common/clock.h"

namespace draplane::client {

// A reference to the object an event is about (core/v1 ObjectReference).
struct ObjectReference {
  std::string api_version;  // "v1"
  std::string kind;         // "Pod"
  std::string namespace_;
  std::string name;
  std::string uid;
  std::string resource_version;
  std::string field_path;  // "spec.containers{main}"
};

struct EventRecorderOptions {
  enum class Api { kEventsV1, kCoreV1 };
  Api api = Api::kEventsV1;
  // kEventsV1: reportingController / reportingInstance ("default-scheduler",
  // "default-scheduler-<host>"). kCoreV1: source.component / source.host, also
  // written as reportingComponent / reportingInstance ("kubelet", node name).
  std::string component;
  std::string instance;
  size_t queue_capacity = 1000;
  // Spam filter per source + object: burst, and seconds per refilled token.
  int spam_burst = 25;
  double spam_refill_seconds = 300;
  // Distinct aggregation keys remembered (client-go's LRU of 4096).
  size_t cache_size = 4096;
  // Injected clock (tests); the real one by default.
  std::shared_ptr<const common::Clock> clock = common::real_clock();
};

class EventRecorder {
 public:
  // `client` must outlive the recorder. Starts the worker thread.
  EventRecorder(RestClient& client, EventRecorderOptions options);
  ~EventRecorder();  // stop()

  // Queues an event; never blocks on the API. `type` is "Normal" or "Warning";
  // `action` is what kEventsV1 writes (kube-scheduler: "Scheduling",
  // "Binding"); `reporting_controller` and `reporting_instance` override
  // options.component and options.instance for this event (kube-scheduler
  // reports as the pod's scheduler profile, instance <profile>-<hostname>).
  void record(const ObjectReference& regarding, std::string type, std::string reason, std::string action,
              std::string note, std::string reporting_controller = "", std::string reporting_instance = "");

  struct Stats {
    int64_t recorded = 0;     // accepted by record()
    int64_t created = 0;      // POSTs that succeeded
    int64_t aggregated = 0;   // PATCHes of a repeat that succeeded
    int64_t dropped_full = 0;  // record() found the queue full
    int64_t dropped_spam = 0;  // writes the spam filter held back
    int64_t failed = 0;        // writes the API refused or that did not reach it
  };
  Stats stats() const;

  // Waits until everything queued so far has been written (or given up).
  void flush();
  // Writes what is queued, then stops the worker. Idempotent.
  void stop();

 private:
  struct Pending {
    ObjectReference regarding;
    std::string type, reason, action, note, controller, instance;
    std::chrono::system_clock::time_point at;
  };
  struct Seen {  // an event written before, for aggregation
    std::string ns, name;
    int64_t count = 1;
    std::chrono::system_clock::time_point last;
    std::list<std::string>::iterator lru;
  };
  struct Bucket {
    double tokens = 0;
    std::chrono::system_clock::time_point refilled;
  };

  std::chrono::system_clock::time_point now() const;
  void run();
  void write(const Pending& p);
  bool allow(const std::string& spam_key, std::chrono::system_clock::time_point at);
  std::string new_name(const std::string& object_name, std::chrono::system_clock::time_point at);
  std::string create_body(const Pending& p, const std::string& ns, const std::string& name) const;
  Path collection_path(const std::string& ns) const;
  void remember(const std::string& key, Seen seen);

  RestClient& client_;
  EventRecorderOptions options_;

  mutable std::mutex mu_;
  std::condition_variable cv_;       // work queued, or stop
  std::condition_variable idle_cv_;  // queue drained
  std::deque<Pending> queue_;
  bool busy_ = false;
  bool stop_ = false;
  Stats stats_;
  std::thread worker_;

  // Worker thread only.
  std::unordered_map<std::string, Seen> seen_;
  std::list<std::string> lru_;  // most recent first
  std::unordered_map<std::string, Bucket> buckets_;
  std::list<std::string> bucket_lru_;
  std::unordered_map<std::string, std::list<std::string>::iterator> bucket_pos_;
  int64_t last_nanos_ = 0;
};

// The reference to a container of a pod (fieldPath spec.containers{name}), as
// the kubelet's container events name it.
ObjectReference container_reference(const ObjectReference& pod, const std::string& container);

}  // namespace draplane::client
