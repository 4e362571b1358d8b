#include "cluster/loopback_client.h"

#include <chrono>
#include <condition_variable>
#include <mutex>

#include "server/query_string.h"

namespace draplane::cluster {

server::Request LoopbackClient::make_request(std::string_view method, std::string_view target) const {
  server::Request r;
  r.method = std::string(method);
  server::split_target(target, r.path, r.query);
  r.accept = "application/json";
  r.user_agent = "draplane/client";  // as the HTTP client: the writes' field manager
  r.identity = identity_;
  return r;
}

Result<client::Response> LoopbackClient::request(std::string_view method, std::string_view target,
                                                 std::string_view body, std::string_view content_type) {
  server::Request r = make_request(method, target);
  if (!body.empty()) {
    r.body = std::string(body);
    r.content_type = std::string(content_type);
  }
  server::ApiServer::Outcome out = api_.handle(r);
  if (out.watch) return Status(Code::kInvalid, "a watch request through request(): use watch()");
  return client::Response{out.response.code, std::move(out.response.body), std::move(out.response.content_type)};
}

Result<void> LoopbackClient::watch(std::string_view target, const std::function<bool(std::string_view)>& on_event,
                                   const std::atomic<bool>* stop, int poll_ms) {
  server::ApiServer::Outcome out = api_.handle(make_request("GET", target));
  if (!out.watch) {
    client::Response r{out.response.code, std::move(out.response.body), std::move(out.response.content_type)};
    if (r.status < 200 || r.status >= 300) return client::status_from_response(r);
    return {};
  }
  // The stream calls notify from the store's delivery thread.
  struct Signal {
    std::mutex mu;
    std::condition_variable cv;
    bool ready = false;
  };
  auto signal = std::make_shared<Signal>();
  out.watch->set_notify([signal] {
    std::lock_guard<std::mutex> l(signal->mu);
    signal->ready = true;
    signal->cv.notify_one();
  });
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(out.watch->timeout_seconds());
  const auto poll = std::chrono::milliseconds(std::max(1, poll_ms));
  std::vector<std::string> lines;
  for (;;) {
    {
      std::lock_guard<std::mutex> l(signal->mu);
      signal->ready = false;
    }
    lines.clear();
    bool alive = out.watch->take(lines);
    for (const std::string& line : lines) {
      std::string_view event(line);
      if (!event.empty() && event.back() == '\n') event.remove_suffix(1);
      if (!on_event(event)) return {};
    }
    if (!alive || std::chrono::steady_clock::now() >= deadline) return {};
    if (stop != nullptr && stop->load()) return {};
    std::unique_lock<std::mutex> l(signal->mu);
    signal->cv.wait_until(l, std::min(deadline, std::chrono::steady_clock::now() + poll),
                          [&] { return signal->ready; });
  }
}

}  // namespace draplane::cluster
