// RestClient against a tiny in-process HTTP server (plain TCP): request/response,
// Status mapping, keep-alive reuse, and a chunked watch stream.
#include "client/rest_client.h"

#include <gtest/gtest.h>

#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <sys/socket.h>

#include <algorithm>
#include <mutex>
#include <thread>

namespace draplane::client {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

class FakeServer {
 public:
  FakeServer() : acceptor_(ioc_, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0)) {
    port_ = acceptor_.local_endpoint().port();
    thread_ = std::thread([this] { serve(); });
  }
  ~FakeServer() {
    stopping_ = true;
    // A blocked accept() is not woken by close() from another thread: connect once.
    beast::error_code ec;
    asio::io_context ioc;
    tcp::socket wake(ioc);
    wake.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port_), ec);
    wake.close(ec);
    if (thread_.joinable()) thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  int connections() const { return connections_; }
  std::string last_auth;
  std::atomic<bool> release_hold{false};
  std::atomic<bool> held_stream_ended{false};

 private:
  void serve() {
    while (!stopping_) {
      beast::error_code ec;
      tcp::socket sock(ioc_);
      acceptor_.accept(sock, ec);
      if (ec || stopping_) return;
      ++connections_;
      beast::flat_buffer buf;
      for (;;) {
        http::request<http::string_body> req;
        http::read(sock, buf, req, ec);
        if (ec) break;
        last_auth = std::string(req[http::field::authorization]);
        std::string target(req.target());
        if (target.find("watch=1&hold=1") != std::string::npos) {
          // One small event, then the stream stays open (as a real watch does) until
          // the test releases it or 5 s pass.
          http::response<http::empty_body> res{http::status::ok, 11};
          res.chunked(true);
          http::response_serializer<http::empty_body> sr{res};
          http::write_header(sock, sr, ec);
          asio::write(sock, http::make_chunk(asio::buffer(std::string("{\"type\":\"ADDED\",\"object\":{}}\n"))), ec);
          for (int i = 0; i < 500 && !release_hold; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
          held_stream_ended = true;
          asio::write(sock, http::make_chunk_last(), ec);
          break;
        }
        if (target.find("watch=1") != std::string::npos) {
          http::response<http::empty_body> res{http::status::ok, 11};
          res.set(http::field::content_type, "application/json");
          res.chunked(true);
          http::response_serializer<http::empty_body> sr{res};
          http::write_header(sock, sr, ec);
          const char* events[] = {"{\"type\":\"ADDED\",\"object\":{\"n\":1}}\n",
                                  "{\"type\":\"MODIFIED\",\"object\":{\"n\":2}}\n{\"type\":\"DEL",
                                  "ETED\",\"object\":{\"n\":3}}\n"};
          for (const char* e : events) {
            asio::write(sock, http::make_chunk(asio::buffer(std::string(e))), ec);
          }
          asio::write(sock, http::make_chunk_last(), ec);
          break;
        }
        http::response<http::string_body> res;
        res.version(11);
        res.set(http::field::content_type, "application/json");
        if (target == "/api/v1/namespaces/default") {
          res.result(http::status::ok);
          res.body() = "{\"kind\":\"Namespace\"}";
        } else if (target == "/conflict") {
          res.result(http::status::conflict);
          res.body() = R"({"kind":"Status","status":"Failure","reason":"Conflict","message":"the object has been modified"})";
        } else if (target == "/exists") {
          res.result(http::status::conflict);
          res.body() = R"({"kind":"Status","reason":"AlreadyExists","message":"already exists"})";
        } else if (req.method() == http::verb::post) {
          res.result(http::status::created);
          res.body() = req.body();
        } else {
          res.result(http::status::not_found);
          res.body() = R"({"kind":"Status","status":"Failure","reason":"NotFound","message":"pods \"x\" not found","code":404})";
        }
        res.keep_alive(req.keep_alive());
        res.prepare_payload();
        http::write(sock, res, ec);
        if (ec || !req.keep_alive()) break;
      }
    }
  }

  asio::io_context ioc_;
  tcp::acceptor acceptor_;
  unsigned short port_ = 0;
  std::thread thread_;
  std::atomic<bool> stopping_{false};
  std::atomic<int> connections_{0};
};

std::unique_ptr<RestClient> make_client(const FakeServer& s) {
  KubeConfig cfg;
  cfg.server = s.url();
  cfg.token = "abc";
  auto c = RestClient::create(cfg);
  EXPECT_TRUE(c.has_value());
  return std::move(*c);
}

TEST(RestClient, GetAndKeepAlive) {
  FakeServer server;
  auto client = make_client(server);
  for (int i = 0; i < 3; ++i) {
    auto body = client->get("/api/v1/namespaces/default");
    ASSERT_TRUE(body.has_value()) << body.error().to_string();
    EXPECT_EQ(*body, "{\"kind\":\"Namespace\"}");
  }
  EXPECT_EQ(server.connections(), 1);
  EXPECT_EQ(server.last_auth, "Bearer abc");
}

TEST(RestClient, StatusMapping) {
  FakeServer server;
  auto client = make_client(server);
  struct Case {
    const char* target;
    Code code;
    const char* message;
  } cases[] = {
      {"/missing", Code::kNotFound, "pods \"x\" not found"},
      {"/conflict", Code::kConflict, "the object has been modified"},
      {"/exists", Code::kAlreadyExists, "already exists"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.target);
    auto body = client->get(c.target);
    ASSERT_FALSE(body.has_value());
    EXPECT_EQ(body.error().code(), c.code);
    EXPECT_EQ(body.error().message(), c.message);
  }
  auto posted = client->post("/api/v1/namespaces", "{\"a\":1}");
  ASSERT_TRUE(posted.has_value());
  EXPECT_EQ(*posted, "{\"a\":1}");
}

TEST(RestClient, WatchSplitsEventsAcrossChunks) {
  FakeServer server;
  auto client = make_client(server);
  std::vector<std::string> events;
  std::atomic<bool> stop{false};
  auto st = client->watch("/api/v1/pods?watch=1", [&](std::string_view e) {
    events.emplace_back(e);
    return true;
  }, &stop, 100);
  ASSERT_TRUE(st.has_value()) << st.error().to_string();
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0], "{\"type\":\"ADDED\",\"object\":{\"n\":1}}");
  EXPECT_EQ(events[2], "{\"type\":\"DELETED\",\"object\":{\"n\":3}}");
}

// An event is delivered as soon as it arrives, not when the body buffer fills
// or the stream ends (a watch may carry one small event a minute).
TEST(RestClient, WatchDeliversEventsWhileTheStreamStaysOpen) {
  FakeServer server;
  auto client = make_client(server);
  std::atomic<bool> stop{false};
  bool seen_while_open = false;
  auto st = client->watch("/api/v1/pods?watch=1&hold=1", [&](std::string_view) {
    seen_while_open = !server.held_stream_ended;
    return false;
  }, &stop, 50);
  server.release_hold = true;
  ASSERT_TRUE(st.has_value()) << st.error().to_string();
  EXPECT_TRUE(seen_while_open);
}

TEST(RestClient, ConnectionRefusedIsUnavailable) {
  KubeConfig cfg;
  cfg.server = "http://127.0.0.1:1";
  auto client = RestClient::create(cfg);
  ASSERT_TRUE(client.has_value());
  auto r = (*client)->get("/healthz");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), Code::kUnavailable);
}

// Several comma-separated servers: one that refuses connections is skipped,
// for requests and for watches; once it is gone for good the next calls go
// straight to the one that answered.
TEST(RestClient, SeveralServersFailOverOnConnectionErrors) {
  FakeServer server;
  KubeConfig cfg;
  cfg.server = "http://127.0.0.1:1," + server.url();
  auto client = RestClient::create(cfg);
  ASSERT_TRUE(client.has_value()) << client.error().to_string();
  for (int i = 0; i < 2; ++i) {
    auto body = (*client)->get("/api/v1/namespaces/default");
    ASSERT_TRUE(body.has_value()) << body.error().to_string();
    EXPECT_EQ(*body, "{\"kind\":\"Namespace\"}");
  }
  EXPECT_EQ(server.connections(), 1);
  // The fake serves one connection at a time: close the kept-alive one first.
  client = RestClient::create(cfg);
  ASSERT_TRUE(client.has_value());
  std::vector<std::string> events;
  auto w = (*client)->watch("/api/v1/pods?watch=1", [&](std::string_view e) {
    events.emplace_back(e);
    return true;
  }, nullptr);
  ASSERT_TRUE(w.has_value()) << w.error().to_string();
  EXPECT_EQ(events.size(), 3u);
  // All servers down: the last connection error.
  cfg.server = "http://127.0.0.1:1,http://127.0.0.1:2";
  auto none = RestClient::create(cfg);
  ASSERT_TRUE(none.has_value());
  auto r = (*none)->get("/healthz");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), Code::kUnavailable);
  cfg.server = "http://127.0.0.1:1,ftp://x";
  EXPECT_EQ(RestClient::create(cfg).error().code(), Code::kInvalid);
}

// A server whose answer to each request is scripted by its index (0, 1, ...):
// answer it, answer it and then close the connection while it is idle, or read
// it and close the connection without answering (the request may have been
// applied, as when a server dies mid-request). `refuse_after_drop` closes the
// listener after the first dropped request, so reconnecting fails.
class ScriptedServer {
 public:
  enum class Action { kAnswer, kAnswerThenClose, kDrop };
  explicit ScriptedServer(std::function<Action(int)> script, bool refuse_after_drop = false)
      : script_(std::move(script)), refuse_after_drop_(refuse_after_drop),
        acceptor_(ioc_, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0)) {
    port_ = acceptor_.local_endpoint().port();
    thread_ = std::thread([this] { serve(); });
  }
  ~ScriptedServer() {
    stopping_ = true;
    // A client still holding a kept-alive connection keeps serve() reading it.
    if (int fd = active_fd_.load(); fd >= 0) ::shutdown(fd, SHUT_RDWR);
    beast::error_code ec;
    asio::io_context ioc;
    tcp::socket wake(ioc);
    wake.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port_), ec);
    wake.close(ec);
    if (thread_.joinable()) thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  int seen(const std::string& method) {
    std::lock_guard<std::mutex> l(mu_);
    return static_cast<int>(std::count(methods_.begin(), methods_.end(), method));
  }
  std::atomic<bool> closed_idle{false};

 private:
  void serve() {
    int index = 0;
    while (!stopping_) {
      beast::error_code ec;
      tcp::socket sock(ioc_);
      acceptor_.accept(sock, ec);
      if (ec || stopping_) return;
      active_fd_ = sock.native_handle();
      beast::flat_buffer buf;
      for (;;) {
        http::request<http::string_body> req;
        http::read(sock, buf, req, ec);
        if (ec) break;
        {
          std::lock_guard<std::mutex> l(mu_);
          methods_.emplace_back(req.method_string());
        }
        const Action action = script_(index++);
        if (action == Action::kDrop) {
          if (refuse_after_drop_) acceptor_.close(ec);  // before the client sees the drop
          active_fd_ = -1;
          sock.close(ec);
          if (refuse_after_drop_) return;
          break;
        }
        http::response<http::string_body> res{http::status::ok, 11};
        res.set(http::field::content_type, "application/json");
        res.body() = "{\"n\":" + std::to_string(index - 1) + "}";
        res.keep_alive(true);
        res.prepare_payload();
        http::write(sock, res, ec);
        if (ec) break;
        if (action == Action::kAnswerThenClose) {
          active_fd_ = -1;
          sock.close(ec);
          closed_idle = true;
          break;
        }
      }
      active_fd_ = -1;
    }
  }

  std::function<Action(int)> script_;
  bool refuse_after_drop_;
  asio::io_context ioc_;
  tcp::acceptor acceptor_;
  unsigned short port_ = 0;
  std::thread thread_;
  std::atomic<bool> stopping_{false};
  std::atomic<int> active_fd_{-1};
  std::mutex mu_;
  std::vector<std::string> methods_;
};

using Action = ScriptedServer::Action;

std::unique_ptr<RestClient> client_for(const std::string& servers) {
  KubeConfig cfg;
  cfg.server = servers;
  auto c = RestClient::create(cfg);
  EXPECT_TRUE(c.has_value());
  return std::move(*c);
}

// A POST written on a reused connection whose answer never comes may have been
// applied: it is sent neither again on a fresh connection nor to the next
// server (generateName would make a second object, a named create a 409).
TEST(RestClient, AWrittenPostIsNeverSentAgain) {
  // Request 0 answered (the connection is kept), request 1 dropped.
  auto answer_first = [](int i) { return i == 0 ? Action::kAnswer : Action::kDrop; };
  {
    ScriptedServer a(answer_first);
    auto client = client_for(a.url());
    ASSERT_TRUE(client->get("/api").has_value());
    auto r = client->post("/api/v1/namespaces/default/pods", "{}");
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error().code(), Code::kUnavailable);
    EXPECT_EQ(a.seen("POST"), 1);
  }
  // The dropping server then refuses connections: the POST does not go on to b.
  ScriptedServer a(answer_first, /*refuse_after_drop=*/true);
  ScriptedServer b([](int) { return Action::kAnswer; });
  auto client = client_for(a.url() + "," + b.url());
  ASSERT_TRUE(client->get("/api").has_value());
  auto r = client->post("/api/v1/namespaces/default/pods", "{}");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(a.seen("POST") + b.seen("POST"), 1);
  // The next call starts at the next server.
  EXPECT_TRUE(client->post("/api/v1/namespaces/default/pods", "{}").has_value());
  EXPECT_EQ(b.seen("POST"), 1);
}

// A GET whose answer was lost is sent again: on a fresh connection when the
// kept one failed, and to the next server when a fresh one did.
TEST(RestClient, AGetWhoseAnswerWasLostIsSentAgain) {
  ScriptedServer a([](int i) { return i == 1 ? Action::kDrop : Action::kAnswer; });
  auto client = client_for(a.url());
  ASSERT_TRUE(client->get("/api").has_value());
  auto r = client->get("/api");
  ASSERT_TRUE(r.has_value()) << r.error().to_string();
  EXPECT_EQ(a.seen("GET"), 3);
  ScriptedServer dropping([](int) { return Action::kDrop; });
  ScriptedServer b([](int) { return Action::kAnswer; });
  client = client_for(dropping.url() + "," + b.url());
  r = client->get("/api");
  ASSERT_TRUE(r.has_value()) << r.error().to_string();
  EXPECT_EQ(dropping.seen("GET"), 1);
  EXPECT_EQ(b.seen("GET"), 1);
}

// An idle connection the server closed is not written on: the POST goes out
// on a fresh one and succeeds.
TEST(RestClient, AnIdleConnectionTheServerClosedIsNotUsed) {
  ScriptedServer a([](int i) { return i == 0 ? Action::kAnswerThenClose : Action::kAnswer; });
  auto client = client_for(a.url());
  ASSERT_TRUE(client->get("/api").has_value());
  while (!a.closed_idle) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // its FIN crosses the loopback
  auto r = client->post("/api/v1/namespaces/default/pods", "{}");
  ASSERT_TRUE(r.has_value()) << r.error().to_string();
  EXPECT_EQ(a.seen("POST"), 1);
}

TEST(RestClient, BadServerUrl) {
  KubeConfig cfg;
  cfg.server = "ftp://x";
  auto client = RestClient::create(cfg);
  ASSERT_FALSE(client.has_value());
  EXPECT_EQ(client.error().code(), Code::kInvalid);
}

}  // namespace
}  // namespace draplane::client
