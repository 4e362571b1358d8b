// EventRecorder: what it writes for new events and repeats in both APIs,
// the spam filter, the bounded queue, and a repeat whose event expired.
#include "client/event_recorder.h"

#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>
#include <vector>

namespace draplane::client {
namespace {

// Records every request; answers 201 to POST, 200 to PATCH (404 for names in
// `gone`), optionally holding every request until release().
class FakeClient final : public RestClient {
 public:
  struct Call {
    std::string method, target, body, content_type;
  };
  Result<Response> request(std::string_view method, std::string_view target, std::string_view body,
                           std::string_view content_type) override {
    std::unique_lock<std::mutex> l(mu_);
    cv_.wait(l, [this] { return !hold_; });
    calls_.push_back({std::string(method), std::string(target), std::string(body), std::string(content_type)});
    for (const auto& g : gone_) {
      if (target.find(g) != std::string_view::npos && method == "PATCH") {
        return Response{404, R"({"kind":"Status","status":"Failure","reason":"NotFound","code":404})",
                        "application/json"};
      }
    }
    return Response{method == "POST" ? 201 : 200, "{}", "application/json"};
  }
  Result<void> watch(std::string_view, const std::function<bool(std::string_view)>&, const std::atomic<bool>*,
                     int) override {
    return {};
  }
  std::vector<Call> calls() {
    std::lock_guard<std::mutex> l(mu_);
    return calls_;
  }
  void hold(bool h) {
    {
      std::lock_guard<std::mutex> l(mu_);
      hold_ = h;
    }
    cv_.notify_all();
  }
  void gone(std::string name) {
    std::lock_guard<std::mutex> l(mu_);
    gone_.push_back(std::move(name));
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool hold_ = false;
  std::vector<Call> calls_;
  std::vector<std::string> gone_;
};

ObjectReference pod(const std::string& name) { return {"v1", "Pod", "ns1", name, "uid-" + name, "", ""}; }

class EventRecorderTest : public ::testing::Test {
 protected:
  EventRecorderOptions options(EventRecorderOptions::Api api) {
    EventRecorderOptions o;
    o.api = api;
    o.component = api == EventRecorderOptions::Api::kEventsV1 ? "default-scheduler" : "kubelet";
    o.instance = api == EventRecorderOptions::Api::kEventsV1 ? "default-scheduler-host" : "node-a";
    o.clock = clock_;
    return o;
  }
  void advance(std::chrono::seconds s) { clock_->advance(s); }
  std::shared_ptr<common::FakeClock> clock_ = std::make_shared<common::FakeClock>();  // 2026-01-01T00:00:00Z
  FakeClient client_;
};

TEST_F(EventRecorderTest, EventsV1CreatesThenAggregatesIntoASeries) {
  EventRecorder r(client_, options(EventRecorderOptions::Api::kEventsV1));
  r.record(pod("p"), "Warning", "FailedScheduling", "Scheduling", "0/3 nodes are available: 3 Insufficient.");
  r.flush();
  advance(std::chrono::seconds(10));
  // Another note for the same (regarding, action, reason, controller): the same event.
  r.record(pod("p"), "Warning", "FailedScheduling", "Scheduling", "0/3 nodes are available: 2 Insufficient.");
  r.flush();
  advance(std::chrono::seconds(10));
  r.record(pod("p"), "Warning", "FailedScheduling", "Scheduling", "0/3 nodes are available: 2 Insufficient.");
  r.flush();
  auto calls = client_.calls();
  ASSERT_EQ(calls.size(), 3u);
  EXPECT_EQ(calls[0].method, "POST");
  EXPECT_EQ(calls[0].target, "/apis/events.k8s.io/v1/namespaces/ns1/events");
  EXPECT_EQ(calls[0].body,
            R"({"apiVersion":"events.k8s.io/v1","kind":"Event","metadata":{"name":"p.18867251edfa0000","namespace":"ns1"},)"
            R"("eventTime":"2026-01-01T00:00:00.000000Z","reportingController":"default-scheduler",)"
            R"("reportingInstance":"default-scheduler-host","action":"Scheduling","reason":"FailedScheduling",)"
            R"("regarding":{"kind":"Pod","namespace":"ns1","name":"p","uid":"uid-p","apiVersion":"v1"},)"
            R"("note":"0/3 nodes are available: 3 Insufficient.","type":"Warning"})");
  EXPECT_EQ(calls[1].method, "PATCH");
  EXPECT_EQ(calls[1].target, "/apis/events.k8s.io/v1/namespaces/ns1/events/p.18867251edfa0000");
  EXPECT_EQ(calls[1].content_type, "application/merge-patch+json");
  EXPECT_EQ(calls[1].body, R"({"series":{"count":2,"lastObservedTime":"2026-01-01T00:00:10.000000Z"}})");
  EXPECT_EQ(calls[2].body, R"({"series":{"count":3,"lastObservedTime":"2026-01-01T00:00:20.000000Z"}})");
  // Another reason, another object: new events.
  r.record(pod("p"), "Normal", "Scheduled", "Binding", "Successfully assigned ns1/p to node-a");
  r.record(pod("q"), "Warning", "FailedScheduling", "Scheduling", "x");
  r.flush();
  calls = client_.calls();
  ASSERT_EQ(calls.size(), 5u);
  EXPECT_EQ(calls[3].method, "POST");
  EXPECT_EQ(calls[4].method, "POST");
  EXPECT_EQ(r.stats().created, 3);
  EXPECT_EQ(r.stats().aggregated, 2);
}

TEST_F(EventRecorderTest, EventsV1SeriesEndsAfterSixQuietMinutes) {
  EventRecorder r(client_, options(EventRecorderOptions::Api::kEventsV1));
  r.record(pod("p"), "Warning", "FailedScheduling", "Scheduling", "a");
  r.flush();
  advance(std::chrono::minutes(7));
  r.record(pod("p"), "Warning", "FailedScheduling", "Scheduling", "a");
  r.flush();
  auto calls = client_.calls();
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[1].method, "POST");
}

TEST_F(EventRecorderTest, CoreV1CountsRepeatsOfTheSameMessage) {
  EventRecorder r(client_, options(EventRecorderOptions::Api::kCoreV1));
  ObjectReference c = container_reference(pod("p"), "main");
  r.record(c, "Warning", "BackOff", "", "Back-off restarting failed container main in pod p_ns1(uid-p)");
  r.flush();
  advance(std::chrono::seconds(30));
  r.record(c, "Warning", "BackOff", "", "Back-off restarting failed container main in pod p_ns1(uid-p)");
  r.flush();
  // A different message is a different event in the legacy API.
  r.record(c, "Warning", "BackOff", "", "something else");
  r.flush();
  auto calls = client_.calls();
  ASSERT_EQ(calls.size(), 3u);
  EXPECT_EQ(calls[0].target, "/api/v1/namespaces/ns1/events");
  EXPECT_EQ(calls[0].body,
            R"({"apiVersion":"v1","kind":"Event","metadata":{"name":"p.18867251edfa0000","namespace":"ns1"},)"
            R"("involvedObject":{"kind":"Pod","namespace":"ns1","name":"p","uid":"uid-p","apiVersion":"v1",)"
            R"("fieldPath":"spec.containers{main}"},"reason":"BackOff",)"
            R"j("message":"Back-off restarting failed container main in pod p_ns1(uid-p)",)j"
            R"("source":{"component":"kubelet","host":"node-a"},"firstTimestamp":"2026-01-01T00:00:00Z",)"
            R"("lastTimestamp":"2026-01-01T00:00:00Z","count":1,"type":"Warning","eventTime":null,)"
            R"("reportingComponent":"kubelet","reportingInstance":"node-a"})");
  EXPECT_EQ(calls[1].method, "PATCH");
  EXPECT_EQ(calls[1].target, "/api/v1/namespaces/ns1/events/p.18867251edfa0000");
  EXPECT_EQ(calls[1].content_type, "application/strategic-merge-patch+json");
  EXPECT_EQ(calls[1].body,
            R"({"count":2,"lastTimestamp":"2026-01-01T00:00:30Z",)"
            R"j("message":"Back-off restarting failed container main in pod p_ns1(uid-p)"})j");
  EXPECT_EQ(calls[2].method, "POST");
}

TEST_F(EventRecorderTest, SpamFilterAllowsABurstThenOnePerFiveMinutesPerObject) {
  EventRecorder r(client_, options(EventRecorderOptions::Api::kCoreV1));
  for (int i = 0; i < 30; ++i) r.record(pod("p"), "Normal", "Started", "", "m" + std::to_string(i));
  r.flush();
  EXPECT_EQ(client_.calls().size(), 25u);
  EXPECT_EQ(r.stats().dropped_spam, 5);
  // A container of the same pod is the same object to the filter.
  r.record(container_reference(pod("p"), "main"), "Normal", "Started", "", "m");
  r.flush();
  EXPECT_EQ(client_.calls().size(), 25u);
  EXPECT_EQ(r.stats().dropped_spam, 6);
  // Another object has its own bucket.
  r.record(pod("q"), "Normal", "Started", "", "m");
  r.flush();
  EXPECT_EQ(client_.calls().size(), 26u);
  advance(std::chrono::seconds(299));
  r.record(pod("p"), "Normal", "Started", "", "late");
  r.flush();
  EXPECT_EQ(client_.calls().size(), 26u);
  advance(std::chrono::seconds(1));
  r.record(pod("p"), "Normal", "Started", "", "later");
  r.flush();
  EXPECT_EQ(client_.calls().size(), 27u);
  EXPECT_EQ(r.stats().dropped_spam, 7);
}

TEST_F(EventRecorderTest, FilteredRepeatsStillCountInTheNextWrite) {
  auto o = options(EventRecorderOptions::Api::kEventsV1);
  o.spam_burst = 2;
  EventRecorder r(client_, o);
  for (int i = 0; i < 4; ++i) r.record(pod("p"), "Warning", "FailedScheduling", "Scheduling", "n");
  r.flush();
  ASSERT_EQ(client_.calls().size(), 2u);  // create + first repeat; two repeats held back
  advance(std::chrono::seconds(300));
  r.record(pod("p"), "Warning", "FailedScheduling", "Scheduling", "n");
  r.flush();
  auto calls = client_.calls();
  ASSERT_EQ(calls.size(), 3u);
  EXPECT_EQ(calls[2].body, R"({"series":{"count":5,"lastObservedTime":"2026-01-01T00:05:00.000000Z"}})");
}

TEST_F(EventRecorderTest, RecordNeverBlocksAndDropsWhenTheQueueIsFull) {
  auto o = options(EventRecorderOptions::Api::kCoreV1);
  o.queue_capacity = 3;
  EventRecorder r(client_, o);
  client_.hold(true);  // the API hangs: the worker is stuck on its first write
  for (int i = 0; i < 10; ++i) r.record(pod("p" + std::to_string(i)), "Normal", "Started", "", "m");
  EventRecorder::Stats s = r.stats();
  EXPECT_EQ(s.recorded + s.dropped_full, 10);
  EXPECT_GE(s.dropped_full, 6);  // at most one taken by the worker plus three queued
  client_.hold(false);
  r.flush();
  EXPECT_EQ(static_cast<int64_t>(client_.calls().size()), r.stats().recorded);
}

TEST_F(EventRecorderTest, ARepeatOfAnExpiredEventCreatesItAgain) {
  EventRecorder r(client_, options(EventRecorderOptions::Api::kEventsV1));
  r.record(pod("p"), "Warning", "FailedScheduling", "Scheduling", "n");
  r.flush();
  client_.gone("p.18867251edfa0000");
  advance(std::chrono::seconds(1));
  r.record(pod("p"), "Warning", "FailedScheduling", "Scheduling", "n");
  r.flush();
  auto calls = client_.calls();
  ASSERT_EQ(calls.size(), 3u);
  EXPECT_EQ(calls[1].method, "PATCH");
  EXPECT_EQ(calls[2].method, "POST");
  EXPECT_NE(calls[2].body.find(R"("name":"p.188672522994ca00")"), std::string::npos) << calls[2].body;
  // The new one is the one repeats go to from now on.
  advance(std::chrono::seconds(1));
  r.record(pod("p"), "Warning", "FailedScheduling", "Scheduling", "n");
  r.flush();
  calls = client_.calls();
  ASSERT_EQ(calls.size(), 4u);
  EXPECT_EQ(calls[3].target, "/apis/events.k8s.io/v1/namespaces/ns1/events/p.188672522994ca00");
  EXPECT_EQ(calls[3].body, R"({"series":{"count":2,"lastObservedTime":"2026-01-01T00:00:02.000000Z"}})");
}

TEST_F(EventRecorderTest, LongNotesAreTruncatedAsValidationRequires) {
  EventRecorder r(client_, options(EventRecorderOptions::Api::kEventsV1));
  r.record(pod("p"), "Warning", "FailedScheduling", "Scheduling", std::string(2000, 'x'));
  r.flush();
  auto calls = client_.calls();
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_NE(calls[0].body.find("\"note\":\"" + std::string(1021, 'x') + "...\""), std::string::npos);
}

}  // namespace
}  // namespace draplane::client
