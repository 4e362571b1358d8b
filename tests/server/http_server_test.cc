// HttpServer end to end over plain HTTP on a free port, with raw sockets so
// that a test controls every byte and pause: limits (413, 414, 431, 429),
// authentication before the body, timeouts (slowloris), the connection cap and
// the access log's escaping.
#include "server/http_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>

#include "server/credentials.h"
#include "server/pki.h"
#include "store/memory_store.h"

namespace draplane::server {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

// A client socket with a receive deadline (a test waits at most this long for
// an answer; the server's own timeouts in these tests are far shorter).
class Conn {
 public:
  explicit Conn(uint16_t port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ok_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
    timeval tv{10, 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  }
  ~Conn() {
    if (fd_ >= 0) ::close(fd_);
  }
  bool ok() const { return ok_; }
  // False once the server has closed (EPIPE/ECONNRESET).
  bool send(std::string_view data) {
    while (!data.empty()) {
      ssize_t n = ::send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
      if (n <= 0) return false;
      data.remove_prefix(static_cast<size_t>(n));
    }
    return true;
  }
  // One response: status line, headers and a Content-Length body. Empty when
  // the connection closed or nothing came before the deadline.
  std::string response() {
    for (;;) {
      size_t end = buf_.find("\r\n\r\n");
      if (end != std::string::npos) {
        size_t len = 0;
        std::string head = lower(buf_.substr(0, end));
        if (size_t cl = head.find("content-length:"); cl != std::string::npos) {
          len = std::stoul(head.substr(cl + 15));
        }
        if (buf_.size() >= end + 4 + len) {
          std::string r = buf_.substr(0, end + 4 + len);
          buf_.erase(0, end + 4 + len);
          return r;
        }
      }
      char tmp[65536];
      ssize_t n = ::recv(fd_, tmp, sizeof tmp, 0);
      if (n <= 0) return "";
      buf_.append(tmp, static_cast<size_t>(n));
    }
  }
  // True when the server closes the connection within `limit` (reads and
  // drops whatever comes before).
  bool closed_within(milliseconds limit) {
    auto deadline = Clock::now() + limit;
    while (Clock::now() < deadline) {
      pollfd p{fd_, POLLIN, 0};
      int left = static_cast<int>(std::chrono::duration_cast<milliseconds>(deadline - Clock::now()).count());
      if (::poll(&p, 1, std::max(left, 1)) <= 0) continue;
      char tmp[4096];
      ssize_t n = ::recv(fd_, tmp, sizeof tmp, MSG_DONTWAIT);
      if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) return true;
    }
    return false;
  }
  // True when something arrives within `limit`.
  bool readable_within(milliseconds limit) {
    pollfd p{fd_, POLLIN, 0};
    return ::poll(&p, 1, static_cast<int>(limit.count())) > 0;
  }
  static std::string lower(std::string s) {
    for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
  }

 private:
  int fd_ = -1;
  bool ok_ = false;
  std::string buf_;
};

int status_of(const std::string& response) {
  if (response.rfind("HTTP/1.1 ", 0) != 0) return 0;
  return std::stoi(response.substr(9, 3));
}
std::string body_of(const std::string& response) {
  size_t end = response.find("\r\n\r\n");
  return end == std::string::npos ? "" : response.substr(end + 4);
}
bool has_header(const std::string& response, const std::string& line) {
  return Conn::lower(response).find("\r\n" + Conn::lower(line) + "\r\n") != std::string::npos;
}

const char kHttpClaims[] = "/apis/resource.k8s.io/v1/namespaces/default/resourceclaims";

class HttpServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = (fs::temp_directory_path() / ("draplane-http-" + std::to_string(::getpid()) + "-" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name()))
               .string();
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    auto t = TokenTable::ensure(dir_, {"n1", "n2"});
    ASSERT_TRUE(t.has_value()) << t.error().message();
    tokens_ = std::make_unique<TokenTable>(std::move(*t));
    for (const auto& [token, id] : tokens_->all()) {
      if (id.node == "n1") node_token_ = token;
      if (id.node == "n2") node2_token_ = token;
    }
    store_ = store::new_memory_store();
    ApiServerOptions ao;
    ao.clock = std::make_shared<common::FakeClock>();
    ao.new_uid = [this] { return "uid-" + std::to_string(++uids_); };
    ao.random_suffix = [] { return "xyz12"; };
    api_ = std::make_unique<ApiServer>(*store_, ao);
    ASSERT_TRUE(api_->bootstrap().ok());
    opts_.host = "127.0.0.1";
    opts_.port = 0;
    opts_.tls = false;
    opts_.threads = 4;
    // Short timeouts: the tests wait for them.
    opts_.read_header_timeout = milliseconds(500);
    opts_.idle_timeout = milliseconds(500);
    opts_.request_timeout = milliseconds(500);
  }
  void TearDown() override {
    if (http_) http_->stop();
    fs::remove_all(dir_);
  }
  void start() {
    http_ = std::make_unique<HttpServer>(*api_, *tokens_, metrics_, opts_);
    auto p = http_->start();
    ASSERT_TRUE(p.has_value()) << p.error().message();
    port_ = *p;
  }
  std::string admin() const { return "Authorization: Bearer " + tokens_->admin_token() + "\r\n"; }
  std::string node() const { return "Authorization: Bearer " + node_token_ + "\r\n"; }
  std::string node2() const { return "Authorization: Bearer " + node2_token_ + "\r\n"; }
  // The server still answers a new client.
  void expect_serving() {
    Conn c(port_);
    ASSERT_TRUE(c.ok());
    ASSERT_TRUE(c.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"));
    EXPECT_EQ(status_of(c.response()), 200);
  }

  std::string dir_;
  std::unique_ptr<TokenTable> tokens_;
  std::string node_token_;
  std::string node2_token_;
  int uids_ = 0;
  std::unique_ptr<store::Store> store_;
  std::unique_ptr<ApiServer> api_;
  Metrics metrics_;
  HttpServerOptions opts_;
  std::unique_ptr<HttpServer> http_;
  uint16_t port_ = 0;
};

TEST_F(HttpServerTest, DefaultsAreKubeApiserverLimits) {
  HttpServerOptions d;
  EXPECT_EQ(d.max_request_body_bytes, 3u * 1024 * 1024);
  EXPECT_EQ(d.max_header_bytes, 1u << 20);
  EXPECT_EQ(d.read_header_timeout, milliseconds(32'000));
  EXPECT_EQ(d.idle_timeout, milliseconds(90'000));
  EXPECT_EQ(d.request_timeout, milliseconds(60'000));
  EXPECT_EQ(d.max_requests_inflight, 400);
  EXPECT_EQ(d.max_mutating_requests_inflight, 200);
}

TEST_F(HttpServerTest, BodyOverLimitIs413BeforeItIsSent) {
  start();
  Conn c(port_);
  ASSERT_TRUE(c.ok());
  // A 64 MiB upload: the header alone earns the answer.
  ASSERT_TRUE(c.send(std::string("POST ") + kHttpClaims + " HTTP/1.1\r\nHost: x\r\n" + admin() +
                     "Content-Type: application/json\r\nContent-Length: 67108864\r\n\r\n{\"kind\":"));
  std::string r = c.response();
  ASSERT_EQ(status_of(r), 413) << r;
  EXPECT_EQ(body_of(r), R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",)"
                        R"("message":"Request entity too large: limit is 3145728","reason":"RequestEntityTooLarge",)"
                        R"("code":413})");
  EXPECT_TRUE(has_header(r, "Connection: close")) << r;
  EXPECT_TRUE(c.closed_within(milliseconds(5000)));
  expect_serving();
}

TEST_F(HttpServerTest, ChunkedBodyOverLimitIs413) {
  opts_.max_request_body_bytes = 64 * 1024;
  start();
  Conn c(port_);
  ASSERT_TRUE(c.ok());
  ASSERT_TRUE(c.send(std::string("POST ") + kHttpClaims + " HTTP/1.1\r\nHost: x\r\n" + admin() +
                     "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"));
  std::string chunk(16 * 1024, ' ');
  char size[16];
  std::snprintf(size, sizeof size, "%zx\r\n", chunk.size());
  for (int i = 0; i < 5; ++i) {
    if (!c.send(size + chunk + "\r\n")) break;
  }
  std::string r = c.response();
  ASSERT_EQ(status_of(r), 413) << r;
  EXPECT_NE(body_of(r).find("limit is 65536"), std::string::npos) << r;
  expect_serving();
}

TEST_F(HttpServerTest, BodyWithinLimitIsServedAndExpectContinueAnswered) {
  start();
  Conn c(port_);
  ASSERT_TRUE(c.ok());
  std::string claim = R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":{"name":"c1"},)"
                      R"("spec":{"devices":{"requests":[{"name":"gpu","exactly":{"deviceClassName":"gpu"}}]}}})";
  ASSERT_TRUE(c.send(std::string("POST ") + kHttpClaims + " HTTP/1.1\r\nHost: x\r\n" + admin() +
                     "Content-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: " +
                     std::to_string(claim.size()) + "\r\n\r\n"));
  std::string cont = c.response();
  ASSERT_EQ(status_of(cont), 100) << cont;
  ASSERT_TRUE(c.send(claim));
  std::string r = c.response();
  EXPECT_EQ(status_of(r), 201) << r;
}

TEST_F(HttpServerTest, WrongTokenIs401WithoutReadingTheBody) {
  start();
  Conn c(port_);
  ASSERT_TRUE(c.ok());
  // 30 MB announced, none sent: the answer cannot wait for it.
  ASSERT_TRUE(c.send(std::string("POST ") + kHttpClaims +
                     " HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer wrong\r\nContent-Length: 31457280\r\n\r\n"));
  std::string r = c.response();
  ASSERT_EQ(status_of(r), 401) << r;
  EXPECT_NE(body_of(r).find(R"("reason":"Unauthorized")"), std::string::npos) << r;
  EXPECT_TRUE(c.closed_within(milliseconds(5000)));
  expect_serving();
}

TEST_F(HttpServerTest, AnonymousUploadIs401WithoutReadingTheBody) {
  start();
  Conn c(port_);
  ASSERT_TRUE(c.ok());
  ASSERT_TRUE(c.send(std::string("POST ") + kHttpClaims + " HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                                                      "10\r\n0123456789abcdef\r\n"));
  std::string r = c.response();
  ASSERT_EQ(status_of(r), 401) << r;
  EXPECT_TRUE(c.closed_within(milliseconds(5000)));
}

TEST_F(HttpServerTest, SlowlorisHeaderIsClosedAfterTheHeaderTimeout) {
  start();
  Conn slow(port_);
  ASSERT_TRUE(slow.ok());
  ASSERT_TRUE(slow.send("GET /healthz HTTP/1.1\r\n"));
  // One header byte every 100 ms, never the end of the header: the 500 ms
  // header timeout counts from the first byte, not from the last.
  bool closed = false;
  auto give_up = Clock::now() + std::chrono::seconds(10);
  while (!closed && Clock::now() < give_up) {
    closed = !slow.send("X") || slow.closed_within(milliseconds(100));
  }
  EXPECT_TRUE(closed) << "still open after 10 s";
  expect_serving();
}

TEST_F(HttpServerTest, IdleAndTricklingConnectionsAreClosed) {
  start();
  Conn idle(port_);
  ASSERT_TRUE(idle.ok());
  Conn body(port_);
  ASSERT_TRUE(body.ok());
  // An authenticated body that stops halfway (unauthenticated ones are not read).
  ASSERT_TRUE(body.send(std::string("POST ") + kHttpClaims + " HTTP/1.1\r\nHost: x\r\n" + admin() +
                        "Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"kind\""));
  EXPECT_TRUE(idle.closed_within(milliseconds(10000)));
  EXPECT_TRUE(body.closed_within(milliseconds(10000)));
  expect_serving();
}

TEST_F(HttpServerTest, LongRequestLineIs414AndLongHeaderIs431) {
  opts_.max_header_bytes = 16 * 1024;
  start();
  {
    Conn c(port_);
    ASSERT_TRUE(c.ok());
    c.send("GET /api/v1/namespaces?labelSelector=" + std::string(20 * 1024, 'a') + " HTTP/1.1\r\nHost: x\r\n\r\n");
    std::string r = c.response();
    EXPECT_EQ(status_of(r), 414) << r;
    EXPECT_EQ(body_of(r), "414 URI Too Long");
  }
  {
    Conn c(port_);
    ASSERT_TRUE(c.ok());
    std::string h = "GET /api/v1/namespaces HTTP/1.1\r\nHost: x\r\n" + admin();
    for (int i = 0; i < 400; ++i) h += "X-Pad-" + std::to_string(i) + ": " + std::string(50, 'p') + "\r\n";
    c.send(h + "\r\n");
    std::string r = c.response();
    EXPECT_EQ(status_of(r), 431) << r;
    EXPECT_EQ(body_of(r), "431 Request Header Fields Too Large");
  }
  expect_serving();
}

TEST_F(HttpServerTest, UrlsUpToTheHeaderLimitAreServed) {
  start();  // default 1 MiB: long label selectors are fine (Beast's own default was 8 KiB)
  Conn c(port_);
  ASSERT_TRUE(c.ok());
  // 100 KiB of valid label values (each at most 63 characters).
  std::string values;
  for (int i = 0; values.size() < 100 * 1024; ++i) values += (i ? "," : "") + std::string(50, 'b') + std::to_string(i);
  ASSERT_TRUE(c.send("GET /api/v1/namespaces?labelSelector=a+notin+(" + values + ") HTTP/1.1\r\nHost: x\r\n" +
                     admin() + "\r\n"));
  EXPECT_EQ(status_of(c.response()), 200);
}

TEST_F(HttpServerTest, InflightOverflowIs429WithRetryAfterExceptForAdminAndWatches) {
  opts_.max_requests_inflight = 1;
  opts_.max_mutating_requests_inflight = 1;
  opts_.request_timeout = milliseconds(5000);
  start();
  // Requests whose bodies are still arriving hold their slots (kube-apiserver's
  // filter sits before the handler that reads the body). The server answers
  // Expect: 100-continue once the slot is taken.
  Conn holdw(port_), holdr(port_);
  ASSERT_TRUE(holdw.ok() && holdr.ok());
  ASSERT_TRUE(holdw.send(std::string("POST ") + kHttpClaims + " HTTP/1.1\r\nHost: x\r\n" + node() +
                         "Content-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: 100\r\n\r\n"));
  ASSERT_EQ(status_of(holdw.response()), 100);
  ASSERT_TRUE(holdr.send("GET /api/v1/namespaces HTTP/1.1\r\nHost: x\r\n" + node() +
                         "Expect: 100-continue\r\nContent-Length: 10\r\n\r\n"));
  ASSERT_EQ(status_of(holdr.response()), 100);
  auto expect_429 = [&](const std::string& request) {
    Conn c(port_);
    c.send(request);
    std::string r = c.response();
    EXPECT_EQ(status_of(r), 429) << r;
    EXPECT_TRUE(has_header(r, "Retry-After: 1")) << r;
    EXPECT_EQ(body_of(r), "Too many requests, please try again later.\n");
  };
  expect_429(std::string("DELETE ") + kHttpClaims + "/c1 HTTP/1.1\r\nHost: x\r\n" + node() + "\r\n");
  expect_429("GET /api/v1/namespaces HTTP/1.1\r\nHost: x\r\n" + node() + "\r\n");
  {
    // system:masters are always served.
    Conn c(port_);
    c.send("GET /api/v1/namespaces HTTP/1.1\r\nHost: x\r\n" + admin() + "\r\n");
    EXPECT_EQ(status_of(c.response()), 200);
  }
  {
    // So is a pod's log (whatever else it answers).
    Conn c(port_);
    c.send("GET /api/v1/namespaces/default/pods/p/log HTTP/1.1\r\nHost: x\r\n" + node() + "\r\n");
    std::string r = c.response();
    EXPECT_NE(status_of(r), 429) << r;
    EXPECT_NE(status_of(r), 0) << r;
  }
  {
    // A watch is long-running: not counted, not refused.
    Conn c(port_);
    c.send("GET /apis/resource.k8s.io/v1/resourceslices?watch=true&timeoutSeconds=1&fieldSelector=spec.nodeName%3Dn1 "
           "HTTP/1.1\r\nHost: x\r\n" + node() + "\r\n");
    std::string r = c.response();
    EXPECT_EQ(status_of(r), 200) << r;
  }
}

// One identity holds at most its share of a pool (a quarter by default): a node
// that trickles its request bodies cannot starve the other nodes.
TEST_F(HttpServerTest, OneUserCannotTakeEveryInflightSlot) {
  opts_.max_requests_inflight = 8;
  opts_.max_mutating_requests_inflight = 4;  // one slot per user
  opts_.request_timeout = milliseconds(5000);
  start();
  Conn hold(port_);
  ASSERT_TRUE(hold.ok());
  ASSERT_TRUE(hold.send(std::string("POST ") + kHttpClaims + " HTTP/1.1\r\nHost: x\r\n" + node() +
                        "Content-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: 100\r\n\r\n"));
  ASSERT_EQ(status_of(hold.response()), 100);
  {
    // The same node again: over its share, although the pool has room.
    Conn c(port_);
    c.send(std::string("DELETE ") + kHttpClaims + "/c1 HTTP/1.1\r\nHost: x\r\n" + node() + "\r\n");
    std::string r = c.response();
    EXPECT_EQ(status_of(r), 429) << r;
    EXPECT_TRUE(has_header(r, "Retry-After: 1")) << r;
  }
  {
    // Another node is served (403: nodes may not delete claims; not 429).
    Conn c(port_);
    c.send(std::string("DELETE ") + kHttpClaims + "/c1 HTTP/1.1\r\nHost: x\r\n" + node2() + "\r\n");
    EXPECT_EQ(status_of(c.response()), 403);
  }
  {
    // Reads are a pool of their own.
    Conn c(port_);
    c.send("GET /apis/resource.k8s.io/v1/deviceclasses HTTP/1.1\r\nHost: x\r\n" + node() + "\r\n");
    EXPECT_EQ(status_of(c.response()), 200);
  }
}

TEST_F(HttpServerTest, ConnectionCapHoldsNewConnectionsUntilOneCloses) {
  opts_.max_connections = 2;
  opts_.idle_timeout = milliseconds(10000);
  start();
  auto a = std::make_unique<Conn>(port_);
  Conn b(port_);
  ASSERT_TRUE(a->ok() && b.ok());
  ASSERT_TRUE(a->send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"));
  ASSERT_EQ(status_of(a->response()), 200);
  ASSERT_TRUE(b.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"));
  ASSERT_EQ(status_of(b.response()), 200);
  Conn third(port_);  // connects (the kernel's backlog) but is not served
  ASSERT_TRUE(third.ok());
  ASSERT_TRUE(third.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"));
  EXPECT_FALSE(third.readable_within(milliseconds(300)));
  a.reset();  // a slot frees
  EXPECT_EQ(status_of(third.response()), 200);
}

TEST_F(HttpServerTest, SilentTlsClientIsClosedAfterTheHeaderTimeout) {
  auto pki = ensure_pki(dir_ + "/pki", {"127.0.0.1"});
  ASSERT_TRUE(pki.has_value()) << pki.error().message();
  opts_.tls = true;
  opts_.cert_file = pki->server_cert;
  opts_.key_file = pki->server_key;
  start();
  Conn c(port_);  // connects, never starts the handshake
  ASSERT_TRUE(c.ok());
  EXPECT_TRUE(c.closed_within(milliseconds(10000)));
}

TEST_F(HttpServerTest, MalformedRequestIs400) {
  start();
  Conn c(port_);
  ASSERT_TRUE(c.ok());
  ASSERT_TRUE(c.send("GET /healthz HTTP/1.1\r\nBad Header\r\n\r\n"));
  EXPECT_EQ(status_of(c.response()), 400);
}

TEST(AccessLog, PathAndUserAreJsonEscaped) {
  Request r;
  r.method = "GET";
  r.path = "/api/v1/x\",\"code\":200}\n{\"forged\":\"";
  r.identity.user = "sys\"tem\n";
  std::string line = access_log_line(r, 404, 1.5);
  ASSERT_FALSE(line.empty());
  EXPECT_EQ(line.back(), '\n');
  EXPECT_EQ(line.find('\n'), line.size() - 1) << line;  // one line
  rapidjson::Document d;
  d.Parse(line.data(), line.size() - 1);
  ASSERT_FALSE(d.HasParseError()) << line;
  EXPECT_EQ(std::string(d["path"].GetString()), r.path);
  EXPECT_EQ(std::string(d["user"].GetString()), r.identity.user);
  EXPECT_EQ(d["code"].GetInt(), 404);
  EXPECT_FALSE(d.HasMember("forged"));
}

}  // namespace
}  // namespace draplane::server
