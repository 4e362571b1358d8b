#include "server/http_server.h"

#include <pthread.h>
#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <array>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <limits>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "server/query_string.h"
#include "common/malloc_tuning.h"
#include "common/cloexec.h"

namespace draplane::server {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = net::ssl;
using tcp = net::ip::tcp;
using net::use_awaitable;

namespace {

void split_target(std::string_view target, Request& r) { server::split_target(target, r.path, r.query); }

// True for Go's strconv.ParseBool true values (how kube-apiserver reads ?watch=).
bool query_true(const std::string& v) { return v == "1" || v == "t" || v == "T" || v == "true" || v == "TRUE" || v == "True"; }

// kube-apiserver's long-running requests (BasicLongRunningRequestCheck with
// verbs watch and proxy, subresources attach, exec, proxy, log, portforward):
// they hold no in-flight slot.
bool long_running(const Request& r) {
  if (auto it = r.query.find("watch"); it != r.query.end() && query_true(it->second)) return true;
  std::string_view p = r.path;
  if (p.rfind("/api/v1/", 0) == 0) {
    p.remove_prefix(8);
  } else if (p.rfind("/apis/", 0) == 0) {
    p.remove_prefix(6);
    for (int i = 0; i < 2; ++i) {  // group and version
      size_t s = p.find('/');
      if (s == std::string_view::npos) return false;
      p.remove_prefix(s + 1);
    }
  } else {
    return false;
  }
  // Segments: [namespaces/NS/]RESOURCE/NAME/SUBRESOURCE (no allocation: every request passes here).
  std::string_view first, third, fifth;
  size_t n = 0;
  while (!p.empty() && n < 6) {
    size_t s = p.find('/');
    std::string_view seg = p.substr(0, s);
    if (n == 0) first = seg;
    if (n == 2) third = seg;
    if (n == 4) fifth = seg;
    ++n;
    if (s == std::string_view::npos) break;
    p.remove_prefix(s + 1);
  }
  if (first == "watch" || first == "proxy") return true;
  std::string_view sub;
  if (first == "namespaces" && n == 5) sub = fifth;
  else if (n == 3) sub = third;
  return sub == "log" || sub == "exec" || sub == "attach" || sub == "portforward" || sub == "proxy";
}

// Go's net/http answers to requests it cannot parse (text, then close).
std::string plain_error(http::status code) {
  return std::to_string(static_cast<int>(code)) + " " + std::string(http::obsolete_reason(code));
}

// A counting semaphore without waiting: kube-apiserver's max-inflight channels,
// plus a share per user, so that one identity (a node trickling its request
// bodies, say) cannot take every slot and starve the others, as API Priority
// and Fairness keeps one flow from taking a priority level's seats.
class InflightLimit {
 public:
  InflightLimit(int limit, int per_user_percent)
      : limit_(limit), per_user_(limit <= 0 || per_user_percent <= 0 || per_user_percent >= 100
                                     ? 0
                                     : std::max(1, limit * per_user_percent / 100)) {}
  bool try_acquire(const std::string& user) {
    if (limit_ <= 0) return true;
    int n = used_.fetch_add(1, std::memory_order_relaxed);
    if (n >= limit_) {
      used_.fetch_sub(1, std::memory_order_relaxed);
      return false;
    }
    if (per_user_ > 0) {
      std::lock_guard lock(mu_);
      int& mine = by_user_[user];
      if (mine >= per_user_) {
        used_.fetch_sub(1, std::memory_order_relaxed);
        return false;
      }
      ++mine;
    }
    return true;
  }
  void release(const std::string& user) {
    if (limit_ <= 0) return;
    if (per_user_ > 0) {
      std::lock_guard lock(mu_);
      auto it = by_user_.find(user);
      if (it != by_user_.end() && --it->second <= 0) by_user_.erase(it);
    }
    used_.fetch_sub(1, std::memory_order_relaxed);
  }

 private:
  const int limit_;
  const int per_user_;  // 0: no share per user
  std::atomic<int> used_{0};
  std::mutex mu_;
  std::unordered_map<std::string, int> by_user_;
};

// An acquired in-flight slot, given back when the request's reply is written.
class InflightSlot {
 public:
  InflightSlot() = default;
  InflightSlot(InflightLimit* l, std::string user) : l_(l), user_(std::move(user)) {}
  InflightSlot(InflightSlot&& o) noexcept : l_(std::exchange(o.l_, nullptr)), user_(std::move(o.user_)) {}
  InflightSlot& operator=(InflightSlot&& o) noexcept {
    if (this != &o) {
      if (l_) l_->release(user_);
      l_ = std::exchange(o.l_, nullptr);
      user_ = std::move(o.user_);
    }
    return *this;
  }
  ~InflightSlot() {
    if (l_) l_->release(user_);
  }

 private:
  InflightLimit* l_ = nullptr;
  std::string user_;
};

const char kUnauthorized[] =
    R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401})";

}  // namespace

std::string access_log_line(const Request& r, int code, double ms) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  auto str = [&w](const char* key, const std::string& v) {
    w.Key(key);
    w.String(v.data(), static_cast<rapidjson::SizeType>(v.size()));
  };
  w.StartObject();
  str("verb", r.method);
  str("path", r.path);
  str("type", r.content_type);
  str("user", r.identity.user);
  w.Key("code");
  w.Int(code);
  w.Key("ms");
  w.Double(static_cast<double>(static_cast<int64_t>(ms * 1000)) / 1000);
  w.EndObject();
  return std::string(buf.GetString(), buf.GetSize()) + "\n";
}

std::string warning_header(std::string_view text) {
  std::string out = "299 - \"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

class HttpServer::Impl {
 public:
  Impl(ApiServer& api, const TokenTable& tokens, Metrics& metrics, HttpServerOptions o)
      : api_(api),
        tokens_(tokens),
        metrics_(metrics),
        opts_(std::move(o)),
        readonly_(opts_.max_requests_inflight, opts_.max_inflight_percent_per_user),
        mutating_(opts_.max_mutating_requests_inflight, opts_.max_inflight_percent_per_user),
        ssl_(ssl::context::tls_server) {}

  Result<uint16_t> start() {
    if (opts_.tls) {
      boost::system::error_code ec;
      ssl_.set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 | ssl::context::no_sslv3 |
                       ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1);
      ssl_.use_certificate_chain_file(opts_.cert_file, ec);
      if (!ec) ssl_.use_private_key_file(opts_.key_file, ssl::context::pem, ec);
      if (ec) return Status(Code::kUnavailable, "tls: " + ec.message());
      // An idle TLS connection gives back OpenSSL's read and write buffers
      // (about 34 KiB) until its next record: most connections idle.
      SSL_CTX_set_mode(ssl_.native_handle(), SSL_MODE_RELEASE_BUFFERS);
      // kubectl and client-go negotiate HTTP/2 with ALPN when offered; offering
      // only http/1.1 keeps them on HTTP/1.1.
      SSL_CTX_set_alpn_select_cb(
          ssl_.native_handle(),
          [](SSL*, const unsigned char** out, unsigned char* outlen, const unsigned char* in, unsigned int inlen,
             void*) -> int {
            static const unsigned char kH1[] = {8, 'h', 't', 't', 'p', '/', '1', '.', '1'};
            unsigned char* sel = nullptr;
            if (SSL_select_next_proto(&sel, outlen, kH1, sizeof kH1, in, inlen) != OPENSSL_NPN_NEGOTIATED) {
              return SSL_TLSEXT_ERR_NOACK;
            }
            *out = sel;
            return SSL_TLSEXT_ERR_OK;
          },
          nullptr);
    }
    boost::system::error_code ec;
    auto addr = net::ip::make_address(opts_.host, ec);
    if (ec) return Status(Code::kInvalid, "listen address " + opts_.host + ": " + ec.message());
    tcp::endpoint ep(addr, opts_.port);
    acceptor_.open(ep.protocol(), ec);
    if (!ec) set_cloexec(acceptor_.native_handle());  // Asio opens sockets without it
    if (!ec) acceptor_.set_option(net::socket_base::reuse_address(true), ec);
    if (!ec) acceptor_.bind(ep, ec);
    if (!ec) acceptor_.listen(net::socket_base::max_listen_connections, ec);
    if (ec) return Status(Code::kUnavailable, "listen on " + opts_.host + ":" + std::to_string(opts_.port) + ": " + ec.message());
    uint16_t port = acceptor_.local_endpoint().port();
    net::co_spawn(acceptor_.get_executor(), accept_loop(), net::detached);
    for (auto& loop : loops_) {
      threads_.emplace_back([&loop] {
        pthread_setname_np(pthread_self(), "apiserver");
        loop->ctx.run();
      });
    }
    return port;
  }

  void stop() {
    if (threads_.empty()) return;
    net::post(ioc_, [this] {
      boost::system::error_code ec;
      acceptor_.close(ec);
    });
    ioc_.stop();
    for (auto& loop : loops_) loop->ctx.stop();
    for (auto& t : threads_) t.join();
    threads_.clear();
  }

 private:
  using ms = std::chrono::milliseconds;

  // A timeout of 0 (or less) is none.
  static void expire(beast::tcp_stream& s, ms timeout) {
    if (timeout.count() > 0) s.expires_after(timeout);
    else s.expires_never();
  }

  net::awaitable<void> accept_loop() {
    net::steady_timer pause(co_await net::this_coro::executor);
    for (;;) {
      // At the connection cap, accept nothing until one closes: the kernel
      // queues new connections meanwhile (Go's LimitListener).
      while (opts_.max_connections > 0 && connections_.load(std::memory_order_relaxed) >= opts_.max_connections) {
        pause.expires_after(ms(10));
        boost::system::error_code ec;
        co_await pause.async_wait(net::redirect_error(use_awaitable, ec));
      }
      // Each connection lives on one thread's loop (round robin), so its
      // requests never hand over between threads.
      auto& loop = loops_[next_loop_++ % loops_.size()]->ctx;
      boost::system::error_code ec;
      tcp::socket sock = co_await acceptor_.async_accept(loop.get_executor(), net::redirect_error(use_awaitable, ec));
      if (ec) {
        if (!acceptor_.is_open()) co_return;
        // Out of descriptors (EMFILE) or memory: retrying at once would spin.
        pause.expires_after(ms(50));
        co_await pause.async_wait(net::redirect_error(use_awaitable, ec));
        continue;
      }
      set_cloexec(sock.native_handle());
      sock.set_option(tcp::no_delay(true), ec);
      connection_opened();
      auto ex = sock.get_executor();
      if (opts_.tls) {
        net::co_spawn(ex, tls_session(std::move(sock)), net::detached);
      } else {
        net::co_spawn(ex, session(beast::tcp_stream(std::move(sock))), net::detached);
      }
    }
  }

  void connection_opened() {
    int n = connections_.fetch_add(1, std::memory_order_relaxed) + 1;
    int peak = peak_connections_.load(std::memory_order_relaxed);
    while (n > peak && !peak_connections_.compare_exchange_weak(peak, n, std::memory_order_relaxed)) {
    }
  }

  // After a flood of connections has drained, the memory their buffers took
  // sits free in the allocator's arenas (one per loop thread, fragmented, each
  // keeping up to its trim threshold): hand it back to the kernel once.
  void connection_closed() {
    int n = connections_.fetch_sub(1, std::memory_order_relaxed) - 1;
    int peak = peak_connections_.load(std::memory_order_relaxed);
    if (peak - n < kTrimAfterClosed || n > peak / 4) return;
    if (!peak_connections_.compare_exchange_strong(peak, n, std::memory_order_relaxed)) return;
    release_free_memory();
  }
  static constexpr int kTrimAfterClosed = 256;

  net::awaitable<void> tls_session(tcp::socket sock) {
    beast::ssl_stream<beast::tcp_stream> stream(beast::tcp_stream(std::move(sock)), ssl_);
    try {
      expire(beast::get_lowest_layer(stream), opts_.read_header_timeout);
      co_await stream.async_handshake(ssl::stream_base::server, use_awaitable);
    } catch (const std::exception&) {
      connection_closed();
      co_return;
    }
    co_await session(std::move(stream));
  }

  // Answers without reading the request's body (or after a broken header) and
  // closes: the reply goes out, the send side is shut, and what the client still
  // sends is read and dropped for a moment, so that closing with unread data
  // (a TCP reset) does not destroy the reply before the client reads it (as
  // Go's net/http does: closeWriteAndWait).
  template <typename Stream, typename Body>
  net::awaitable<void> reply_and_close(Stream& stream, http::response<Body>& res) {
    auto& tcp = beast::get_lowest_layer(stream);
    res.keep_alive(false);
    res.prepare_payload();
    boost::system::error_code ec;
    expire(tcp, opts_.request_timeout);
    co_await http::async_write(stream, res, net::redirect_error(use_awaitable, ec));
    if (ec) co_return;
    tcp.socket().shutdown(tcp::socket::shutdown_send, ec);
    tcp.expires_after(ms(500));
    std::array<char, 16384> sink;
    for (;;) {
      co_await tcp.async_read_some(net::buffer(sink), net::redirect_error(use_awaitable, ec));
      if (ec) break;
    }
  }

  template <typename Stream>
  net::awaitable<void> plain_reply_and_close(Stream& stream, http::status code, unsigned version) {
    http::response<http::string_body> res{code, version};
    res.set(http::field::content_type, "text/plain; charset=utf-8");
    res.body() = plain_error(code);
    co_await reply_and_close(stream, res);
  }

  static http::response<http::string_body> status_response(int code, std::string body, unsigned version) {
    http::response<http::string_body> res{static_cast<http::status>(code), version};
    res.set(http::field::content_type, "application/json");
    res.set(http::field::cache_control, "no-cache, private");
    res.body() = std::move(body);
    return res;
  }

  static std::string too_large_json(uint64_t limit) {
    return R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Request entity too large: limit is )" +
           std::to_string(limit) + R"(","reason":"RequestEntityTooLarge","code":413})";
  }

  template <typename Stream>
  net::awaitable<void> session(Stream stream) {
    struct Closed {
      Impl* self;
      ~Closed() { self->connection_closed(); }
    } closed{this};
    beast::flat_buffer buf;
    auto& tcp = beast::get_lowest_layer(stream);
    try {
      for (;;) {
        // Between requests: the idle timeout, until the next one's first byte.
        if (buf.size() == 0) {
          // A large request grew the buffer; an idle connection keeps little.
          if (buf.capacity() > kIdleBufferBytes) buf.shrink_to_fit();
          expire(tcp, opts_.idle_timeout);
          size_t n = co_await stream.async_read_some(buf.prepare(kIdleBufferBytes), use_awaitable);
          buf.commit(n);
        }
        expire(tcp, opts_.read_header_timeout);
        http::request_parser<http::string_body> parser;
        parser.header_limit(opts_.max_header_bytes);
        // Checked below, once the caller is known (the parser would refuse a
        // large Content-Length before the header is even complete).
        parser.body_limit(std::numeric_limits<std::uint64_t>::max());
        boost::system::error_code ec;
        co_await http::async_read_header(stream, buf, parser, net::redirect_error(use_awaitable, ec));
        if (ec == http::error::header_limit) {
          // The request line is parsed first, on its own: no target yet means
          // it was the request line that did not fit.
          bool line = parser.get().target().empty();
          co_await plain_reply_and_close(stream, line ? http::status::uri_too_long
                                                      : http::status::request_header_fields_too_large, 11);
          break;
        }
        if (ec) {
          // A request that does not parse is 400, as Go answers it; a timeout,
          // a client gone or a socket error gets no answer.
          bool malformed = &ec.category() == &make_error_code(http::error::bad_target).category() &&
                           ec != http::error::end_of_stream && ec != http::error::partial_message;
          if (malformed) co_await plain_reply_and_close(stream, http::status::bad_request, 11);
          break;
        }
        bool keep_going = co_await serve(stream, buf, parser);
        if (!keep_going) break;
      }
    } catch (const std::exception&) {
      // Client went away, timed out or sent garbage: drop the connection.
    }
    beast::error_code ec;
    tcp.socket().shutdown(tcp::socket::shutdown_both, ec);
  }
  static constexpr size_t kIdleBufferBytes = 4096;

  // One request whose header was read. False when the connection is done.
  template <typename Stream>
  net::awaitable<bool> serve(Stream& stream, beast::flat_buffer& buf, http::request_parser<http::string_body>& parser) {
    auto& tcp = beast::get_lowest_layer(stream);
    auto& req = parser.get();
    auto start = std::chrono::steady_clock::now();
    Request r;
    r.method = std::string(req.method_string());
    split_target(std::string_view(req.target().data(), req.target().size()), r);
    r.accept = std::string(req[http::field::accept]);
    r.content_type = std::string(req[http::field::content_type]);
    r.if_none_match = std::string(req[http::field::if_none_match]);
    r.user_agent = std::string(req[http::field::user_agent]);
    bool body_pending = !parser.is_done();
    unsigned version = req.version();

    // Authentication, before anything else of the request is read.
    std::string auth(req[http::field::authorization]);
    if (auth.rfind("Bearer ", 0) == 0) {
      const Identity* id = tokens_.find(auth.substr(7));
      if (!id) {
        auto res = status_response(401, kUnauthorized, version);
        if (opts_.log_requests) log(r, 401, start);
        co_await reply_and_close(stream, res);
        co_return false;
      }
      r.identity = *id;
    }

    // kube-apiserver's max-inflight filter: long-running requests are not
    // counted; system:masters are served even when the limit is reached.
    InflightSlot slot;
    if (!long_running(r)) {
      bool mutating = r.method != "GET" && r.method != "HEAD";
      InflightLimit& limit = mutating ? mutating_ : readonly_;
      if (limit.try_acquire(r.identity.user)) {
        slot = InflightSlot(&limit, r.identity.user);
      } else if (!r.identity.admin) {
        http::response<http::string_body> res{http::status::too_many_requests, version};
        res.set(http::field::content_type, "text/plain; charset=utf-8");
        res.set("X-Content-Type-Options", "nosniff");
        res.set(http::field::retry_after, "1");
        res.body() = "Too many requests, please try again later.\n";
        if (opts_.log_requests) log(r, 429, start);
        if (body_pending) {
          co_await reply_and_close(stream, res);
          co_return false;
        }
        res.keep_alive(req.keep_alive());
        res.prepare_payload();
        expire(tcp, opts_.request_timeout);
        co_await http::async_write(stream, res, use_awaitable);
        co_return req.keep_alive();
      }
    }

    if (body_pending) {
      // The anonymous user may only reach the health and version endpoints,
      // none of which takes a body: answer without reading it.
      if (r.identity.user.empty()) {
        ApiServer::Outcome out = api_.handle(r);
        auto res = status_response(out.response.code, std::move(out.response.body), version);
        res.set(http::field::content_type, out.response.content_type);
        if (opts_.log_requests) log(r, out.response.code, start);
        co_await reply_and_close(stream, res);
        co_return false;
      }
      auto length = parser.content_length();
      if (length && *length > opts_.max_request_body_bytes) {
        auto res = status_response(413, too_large_json(opts_.max_request_body_bytes), version);
        if (opts_.log_requests) log(r, 413, start);
        co_await reply_and_close(stream, res);
        co_return false;
      }
      if (beast::iequals(req[http::field::expect], "100-continue")) {
        http::response<http::empty_body> cont{http::status::continue_, version};
        expire(tcp, opts_.request_timeout);
        co_await http::async_write(stream, cont, use_awaitable);
      }
      parser.body_limit(opts_.max_request_body_bytes);
      expire(tcp, opts_.request_timeout);
      boost::system::error_code ec;
      co_await http::async_read(stream, buf, parser, net::redirect_error(use_awaitable, ec));
      if (ec == http::error::body_limit) {
        auto res = status_response(413, too_large_json(opts_.max_request_body_bytes), version);
        if (opts_.log_requests) log(r, 413, start);
        co_await reply_and_close(stream, res);
        co_return false;
      }
      if (ec) co_return false;  // timed out or went away mid-body
    }
    r.body = std::move(req.body());

    ApiServer::Outcome out = api_.handle(r);
    if (out.watch) {
      tcp.expires_never();
      co_await stream_watch(stream, version, std::move(out.watch));
      co_return false;
    }
    http::response<http::string_body> res{static_cast<http::status>(out.response.code), version};
    res.set(http::field::content_type, out.response.content_type);
    res.set(http::field::cache_control, "no-cache, private");
    for (const auto& w : out.response.warnings) res.insert(http::field::warning, warning_header(w));
    for (const auto& [k, v] : out.response.headers) res.set(k, v);
    res.keep_alive(req.keep_alive());
    res.body() = std::move(out.response.body);
    res.prepare_payload();
    if (opts_.log_requests) log(r, out.response.code, start);
    expire(tcp, opts_.request_timeout);
    co_await http::async_write(stream, res, use_awaitable);
    co_return req.keep_alive();
  }

  template <typename Stream>
  net::awaitable<void> stream_watch(Stream& stream, unsigned version, std::unique_ptr<WatchStream> watch) {
    metrics_.watch_opened();
    struct Closer {
      Metrics& m;
      ~Closer() { m.watch_closed(); }
    } closer{metrics_};
    auto timer = std::make_shared<net::steady_timer>(co_await net::this_coro::executor);
    auto signaled = std::make_shared<std::atomic<bool>>(false);
    auto ex = co_await net::this_coro::executor;
    watch->set_notify([timer, signaled, ex] {
      signaled->store(true);
      net::post(ex, [timer] { timer->cancel(); });
    });
    http::response<http::empty_body> res{http::status::ok, version};
    res.set(http::field::content_type, "application/json");
    res.set(http::field::cache_control, "no-cache, private");
    res.chunked(true);
    http::response_serializer<http::empty_body> sr{res};
    auto& tcp = beast::get_lowest_layer(stream);
    // Each write of the stream must finish within the request timeout: a
    // watcher that stops reading is dropped, not buffered for.
    expire(tcp, opts_.request_timeout);
    co_await http::async_write_header(stream, sr, use_awaitable);
    tcp.expires_never();
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(watch->timeout_seconds());
    std::vector<std::string> lines;
    for (;;) {
      signaled->store(false);
      lines.clear();
      bool alive = watch->take(lines);
      if (!lines.empty()) {
        std::string data;
        for (auto& l : lines) data += l;
        expire(tcp, opts_.request_timeout);
        co_await net::async_write(stream, http::make_chunk(net::buffer(data)), use_awaitable);
        tcp.expires_never();
      }
      if (!alive || std::chrono::steady_clock::now() >= deadline) break;
      if (signaled->load()) continue;
      timer->expires_at(deadline);
      boost::system::error_code ec;
      co_await timer->async_wait(net::redirect_error(use_awaitable, ec));
    }
    expire(tcp, opts_.request_timeout);
    co_await net::async_write(stream, http::make_chunk_last(), use_awaitable);
  }

  void log(const Request& r, int code, std::chrono::steady_clock::time_point start) {
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    std::string line = access_log_line(r, code, ms);
    std::fwrite(line.data(), 1, line.size(), stderr);
  }

  ApiServer& api_;
  const TokenTable& tokens_;
  Metrics& metrics_;
  HttpServerOptions opts_;
  InflightLimit readonly_;
  InflightLimit mutating_;
  std::atomic<int> connections_{0};
  std::atomic<int> peak_connections_{0};  // since memory was last released
  struct Loop {
    net::io_context ctx{1};  // a hint: one thread runs it (posts from other threads stay safe)
    net::executor_work_guard<net::io_context::executor_type> busy = net::make_work_guard(ctx);  // run() waits when idle
  };
  static std::vector<std::unique_ptr<Loop>> make_loops(int n) {
    std::vector<std::unique_ptr<Loop>> out;
    for (int i = 0; i < std::max(1, n); ++i) out.push_back(std::make_unique<Loop>());
    return out;
  }
  std::vector<std::unique_ptr<Loop>> loops_ = make_loops(opts_.threads);
  size_t next_loop_ = 0;  // accept_loop only
  net::io_context& ioc_ = loops_[0]->ctx;
  ssl::context ssl_;
  tcp::acceptor acceptor_{ioc_};
  std::vector<std::thread> threads_;
};

HttpServer::HttpServer(ApiServer& api, const TokenTable& tokens, Metrics& metrics, HttpServerOptions options)
    : impl_(std::make_unique<Impl>(api, tokens, metrics, std::move(options))) {}
HttpServer::~HttpServer() { stop(); }
Result<uint16_t> HttpServer::start() { return impl_->start(); }
void HttpServer::stop() { impl_->stop(); }

}  // namespace draplane::server
