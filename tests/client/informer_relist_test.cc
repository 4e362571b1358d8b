// The typed informer across a relist (410 Gone): it keeps typed objects and no
// JSON, so modified objects are told by their resourceVersion and an object
// found gone is handed on in its last cached state.
#include <gtest/gtest.h>

#include <chrono>
#include <deque>
#include <mutex>
#include <thread>

#include "client/informer.h"

namespace draplane::client {
namespace informer_relist_test {

std::string claim(const std::string& name, const std::string& rv, const std::string& label) {
  return R"({"metadata":{"name":")" + name + R"(","namespace":"default","resourceVersion":")" + rv +
         R"(","labels":{"step":")" + label + R"("}},"spec":{"devices":{"requests":[]}}})";
}

std::string list_of(const std::string& rv, const std::vector<std::string>& items) {
  std::string out = R"({"kind":"ResourceClaimList","apiVersion":"resource.k8s.io/v1","metadata":{"resourceVersion":")" +
                    rv + R"("},"items":[)";
  for (size_t i = 0; i < items.size(); ++i) out += (i ? "," : "") + items[i];
  return out + "]}";
}

// Answers lists from a script; the first watch ends at once with 410 Gone, the
// later ones wait until the informer stops.
class ScriptedClient final : public RestClient {
 public:
  explicit ScriptedClient(std::deque<std::string> lists) : lists_(std::move(lists)) {}
  Result<Response> request(std::string_view method, std::string_view, std::string_view, std::string_view) override {
    std::lock_guard<std::mutex> l(mu_);
    if (method != "GET" || lists_.empty()) return Response{500, "{}", "application/json"};
    Response r{200, lists_.front(), "application/json"};
    lists_.pop_front();
    return r;
  }
  Result<void> watch(std::string_view, const std::function<bool(std::string_view)>& on_event,
                     const std::atomic<bool>* stop, int) override {
    bool first;
    {
      std::lock_guard<std::mutex> l(mu_);
      first = watches_++ == 0;
    }
    if (first) {
      on_event(R"({"type":"ERROR","object":{"kind":"Status","code":410,"message":"too old"}})");
      return {};
    }
    while (!stop->load()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    return {};
  }
  int lists_left() {
    std::lock_guard<std::mutex> l(mu_);
    return static_cast<int>(lists_.size());
  }

 private:
  std::mutex mu_;
  std::deque<std::string> lists_;
  int watches_ = 0;
};

struct Seen {
  EventType type;
  std::string name, old_label, label;
};

std::vector<Seen> run(bool keep_objects, std::vector<api::ResourceClaim>* cached) {
  ScriptedClient client({list_of("10", {claim("a", "1", "one"), claim("b", "2", "one"), claim("same", "3", "one")}),
                         list_of("20", {claim("a", "11", "two"), claim("c", "12", "one"), claim("same", "3", "one")})});
  RawInformer::Options o{"resource.k8s.io/v1", "ResourceClaim", "/apis/resource.k8s.io/v1/resourceclaims", "", "", 1};
  o.keep_objects = keep_objects;
  Informer<api::ResourceClaim> inf(client, o);
  std::mutex mu;
  std::vector<Seen> seen;
  for (int h = 0; h < 2; ++h) {
    inf.add_handler([&, h](EventType t, const api::ResourceClaim* old, const api::ResourceClaim& obj) {
      if (h == 1) return;  // a second handler: the first one's events must not change
      auto label = [](const api::ResourceClaim& c) {
        auto it = c.metadata.labels.find("step");
        return it == c.metadata.labels.end() ? std::string("-") : it->second;
      };
      std::lock_guard<std::mutex> l(mu);
      seen.push_back({t, obj.metadata.name, old ? label(*old) : "", label(obj)});
    });
  }
  inf.start();
  for (int i = 0; i < 400 && client.lists_left() > 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  *cached = inf.list();
  inf.stop();
  return seen;
}

TEST(InformerRelist, ModifiedByResourceVersionAndTheGoneOneInItsLastState) {
  std::vector<api::ResourceClaim> cached;
  auto seen = run(true, &cached);
  ASSERT_EQ(seen.size(), 6u);
  EXPECT_EQ(seen[0].type, EventType::kAdded);
  EXPECT_EQ(seen[0].name, "a");
  EXPECT_EQ(seen[1].name, "b");
  EXPECT_EQ(seen[2].name, "same");
  // After the relist: b gone with its last state, a modified (old and new), c
  // added; "same" kept its resourceVersion, so no event.
  EXPECT_EQ(seen[3].type, EventType::kDeleted);
  EXPECT_EQ(seen[3].name, "b");
  EXPECT_EQ(seen[3].label, "one");
  EXPECT_EQ(seen[3].old_label, "one");
  EXPECT_EQ(seen[4].type, EventType::kModified);
  EXPECT_EQ(seen[4].name, "a");
  EXPECT_EQ(seen[4].old_label, "one");
  EXPECT_EQ(seen[4].label, "two");
  EXPECT_EQ(seen[5].type, EventType::kAdded);
  EXPECT_EQ(seen[5].name, "c");
  ASSERT_EQ(cached.size(), 3u);
  EXPECT_EQ(cached[0].metadata.name, "a");
  EXPECT_EQ(cached[0].metadata.resourceVersion, "11");
  EXPECT_EQ(cached[1].metadata.name, "c");
  EXPECT_EQ(cached[2].metadata.name, "same");
}

TEST(InformerRelist, WithoutKeptObjectsTheGoneOneIsItsKeyAndNothingIsCached) {
  std::vector<api::ResourceClaim> cached;
  auto seen = run(false, &cached);
  ASSERT_EQ(seen.size(), 6u);
  EXPECT_EQ(seen[3].type, EventType::kDeleted);
  EXPECT_EQ(seen[3].name, "b");
  EXPECT_EQ(seen[3].label, "-");  // the key alone: no state was kept
  EXPECT_EQ(seen[4].type, EventType::kModified);
  EXPECT_EQ(seen[4].old_label, "");  // no previous object either
  EXPECT_EQ(seen[4].label, "two");
  EXPECT_TRUE(cached.empty());
}

}  // namespace informer_relist_test
}  // namespace draplane::client
