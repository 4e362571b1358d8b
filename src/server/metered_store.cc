#include "server/metered_store.h"

#include <chrono>

#include "server/resources.h"

namespace draplane::server {
namespace {

// The group and resource of a store key or prefix ("/registry/resourceclaims/ns/x").
std::pair<std::string, std::string> group_resource(std::string_view key) {
  static constexpr std::string_view kPrefix = "/registry/";
  if (key.substr(0, kPrefix.size()) != kPrefix) return {"", ""};
  std::string_view rest = key.substr(kPrefix.size());
  std::string resource(rest.substr(0, rest.find('/')));
  for (const auto& r : all_resources()) {
    if (!r.converted && r.resource == resource) return {r.group, resource};
  }
  return {"", resource};
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Runs f (a store call on `key`) and records it as `op`.
template <typename F>
auto timed(Metrics& metrics, const char* op, std::string_view key, F&& f) -> decltype(f()) {
  auto start = std::chrono::steady_clock::now();
  auto result = f();
  auto [group, resource] = group_resource(key);
  // NotFound is an answer (kube-apiserver's etcd3 store does not count it as an error either).
  bool error = !result.has_value() && result.error().code() != Code::kNotFound;
  metrics.observe_store(op, group, resource, seconds_since(start), error);
  return result;
}

class MeteredStore : public store::Store {
 public:
  MeteredStore(store::Store& inner, Metrics& metrics) : inner_(inner), metrics_(metrics) {}

  int64_t current_revision() override { return inner_.current_revision(); }
  int64_t compacted_revision() override { return inner_.compacted_revision(); }

  Result<store::KeyValue> get(std::string_view key, int64_t revision) override {
    return timed(metrics_, "get", key, [&] { return inner_.get(key, revision); });
  }
  Result<store::ListResult> list(std::string_view prefix, const store::ListOptions& opts) override {
    return timed(metrics_, "list", prefix, [&] { return inner_.list(prefix, opts); });
  }
  Result<store::KeyValue> create(std::string_view key, std::string_view value) override {
    return timed(metrics_, "create", key, [&] { return inner_.create(key, value); });
  }
  Result<store::WriteResult> update(std::string_view key, std::string_view value, int64_t expected) override {
    return timed(metrics_, "update", key, [&] { return inner_.update(key, value, expected); });
  }
  Result<store::WriteResult> remove(std::string_view key, int64_t expected) override {
    return timed(metrics_, "delete", key, [&] { return inner_.remove(key, expected); });
  }
  Result<std::unique_ptr<store::WatchHandle>> watch(std::string_view prefix, int64_t start_revision,
                                                    store::WatchCallback callback) override {
    return inner_.watch(prefix, start_revision, std::move(callback));
  }
  Status compact(int64_t revision) override {
    auto start = std::chrono::steady_clock::now();
    Status st = inner_.compact(revision);
    metrics_.observe_store("compact", "", "", seconds_since(start), !st.ok());
    return st;
  }

 private:
  store::Store& inner_;
  Metrics& metrics_;
};

}  // namespace

std::unique_ptr<store::Store> metered_store(store::Store& inner, Metrics& metrics) {
  return std::make_unique<MeteredStore>(inner, metrics);
}

}  // namespace draplane::server
