// Watch: store events turned into Kubernetes watch events
// ({"type":"ADDED|MODIFIED|DELETED|BOOKMARK|ERROR","object":{...}}), filtered by
// selectors the way the watch cache does (an object leaving the selection is a
// DELETED event, one entering it is ADDED).
#include <algorithm>
#include <limits>

#include "server/internal/impl_class.h"

namespace draplane::server {
namespace {

std::string event_line(const char* type, const std::string& object_json) {
  return std::string(R"({"type":")") + type + R"(","object":)" + object_json + "}\n";
}

class Stream final : public WatchStream {
 public:
  Stream(ListParams params, int timeout, const ResourceInfo& served, bool table, std::shared_ptr<const common::Clock> clock,
         std::shared_ptr<WatchEventCache> cache)
      : params_(std::move(params)), timeout_(timeout), served_(served), table_of_(table ? &served : nullptr),
        clock_(std::move(clock)), cache_(std::move(cache)) {}

  // The event's object (in the watched version): the object itself, or a
  // one-row Table for kubectl get -w.
  std::string render(Json& obj) {
    if (table_of_ == nullptr) return served_text(served_, to_string(obj));
    to_served_version(served_, obj);
    std::vector<const JsonValue*> one{&obj};
    return to_table(*table_of_, one, get_string(obj, {"metadata", "resourceVersion"}), "", clock_->unix_seconds(), true);
  }
  ~Stream() override { handle_.reset(); }  // stops callbacks before members die

  void set_notify(std::function<void()> notify) override {
    std::lock_guard<std::mutex> l(mu_);
    notify_ = std::move(notify);
  }
  bool take(std::vector<std::string>& out) override {
    std::lock_guard<std::mutex> l(mu_);
    for (auto& s : pending_) out.push_back(std::move(s));
    pending_.clear();
    return !ended_;
  }
  int timeout_seconds() const override { return timeout_; }

  void push(std::string line) {
    std::function<void()> n;
    {
      std::lock_guard<std::mutex> l(mu_);
      pending_.push_back(std::move(line));
      n = notify_;
    }
    if (n) n();
  }
  void end() {
    std::function<void()> n;
    {
      std::lock_guard<std::mutex> l(mu_);
      ended_ = true;
      n = notify_;
    }
    if (n) n();
  }

  // Store delivery thread.
  void on_events(const std::vector<store::Event>& events, const Status& status) {
    for (const auto& ev : events) {
      auto d = cache_->get(ev);
      if (ev.type == store::EventType::kPut) {
        if (!d->object) continue;
        bool now_in = selected(params_, *d->object);
        bool was_in = d->prev && selected(params_, *d->prev);
        if (now_in) push(event_line(ev.prev && was_in ? "MODIFIED" : "ADDED", render(*d, false)));
        else if (was_in) push(event_line("DELETED", render(*d, false)));
      } else if (ev.prev) {
        if (!d->prev || !selected(params_, *d->prev)) continue;
        push(event_line("DELETED", render(*d, true)));
      }
    }
    if (!status.ok()) {
      ApiError e = from_code(status.code(), status.message());
      push(event_line("ERROR", status_json(e)));
      end();
    }
  }

  // A decoded event's object (or previous value) as this stream sends it.
  std::string render(const WatchEventCache::Entry& d, bool prev) {
    if (table_of_ == nullptr) return d.rendered(served_, prev);
    Json copy;
    copy.CopyFrom(prev ? *d.prev : *d.object, copy.GetAllocator());
    return render(copy);
  }

  std::unique_ptr<store::WatchHandle> handle_;

 private:
  ListParams params_;
  int timeout_;
  const ResourceInfo& served_;
  const ResourceInfo* table_of_;
  std::shared_ptr<const common::Clock> clock_;
  std::shared_ptr<WatchEventCache> cache_;
  std::mutex mu_;
  std::vector<std::string> pending_;
  std::function<void()> notify_;
  bool ended_ = false;
};

}  // namespace

ApiServer::Outcome ApiServer::Impl::watch(const Request& req, const Target& t) {
  Outcome out;
  if (auto e = authorize(req, t, "watch", nullptr, nullptr)) {
    out.response = error_reply(*e);
    return out;
  }
  ListParams params;
  if (auto e = parse_list_params(req, *t.resource, params)) {
    out.response = error_reply(*e);
    return out;
  }
  // timeoutSeconds: 0 or absent is the server's default; a negative one has
  // already passed (the watch ends at once).
  int timeout = 1800;
  if (params.timeout_seconds.value_or(0) != 0) {
    timeout = static_cast<int>(std::clamp<int64_t>(*params.timeout_seconds, 0, int64_t{1} << 30));
  }
  const std::string& rv = params.resource_version;
  // The storage's ParseResourceVersion: a resourceVersion that is not a uint64
  // fails the watch with an error that is not a Status (500, reason unset).
  uint64_t rv_number = 0;
  if (!rv.empty() && rv != "0") {
    auto n = go_parse_uint64(rv);
    if (!n.has_value()) {
      ApiError e = from_code(Code::kInternal, api::field_invalid(api::FieldPath("resourceVersion"), rv,
                                                                 n.error().message()).to_string());
      e.reason = "";
      out.response = error_reply(e);
      return out;
    }
    rv_number = *n;
  }
  bool initial = params.send_initial_events.value_or(false);
  auto stream = std::make_unique<Stream>(params, timeout, *t.resource, wants_table(req.accept), opts_.clock,
                                         watch_events_);
  Stream* s = stream.get();
  int64_t from = 0;
  std::string prefix = t.prefix();
  if (initial) {
    auto l = store_.list(prefix);
    if (!l.has_value()) {
      out.response = error_reply(from_code(l.error().code(), l.error().message()));
      return out;
    }
    for (const auto& kv : l->items) {
      auto obj = parse_json(kv.value);
      if (!obj.has_value() || !selected(params, *obj)) continue;
      set_resource_version(*obj, kv.mod_revision);
      s->push(event_line("ADDED", s->render(*obj)));
    }
    // The cacher marks the end of the initial events when bookmarks are allowed.
    if (params.allow_watch_bookmarks) {
      s->push(event_line("BOOKMARK", R"({"kind":")" + t.resource->kind + R"(","apiVersion":")" +
                                         t.resource->group_version() + R"(","metadata":{"resourceVersion":")" +
                                         std::to_string(l->revision) +
                                         R"(","annotations":{"k8s.io/initial-events-end":"true"}}})"));
    }
    from = l->revision + 1;
  } else if (rv_number == 0) {
    // sendInitialEvents=false from "" or "0": changes from now on.
    from = store_.current_revision() + 1;
  } else {
    if (rv_number >= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      rv_number = static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) - 1;
    }
    from = static_cast<int64_t>(rv_number) + 1;
  }
  auto h = store_.watch(prefix, from, [s](const std::vector<store::Event>& evs, const Status& st) { s->on_events(evs, st); });
  if (!h.has_value()) {
    if (h.error().code() == Code::kGone || h.error().code() == Code::kInvalid) {
      // Kubernetes answers 200 and then one ERROR event (410 Expired).
      ApiError e = from_code(Code::kGone, "too old resource version: " + rv + " (" +
                                              std::to_string(store_.compacted_revision()) + ")");
      if (h.error().code() == Code::kInvalid) {
        e = from_code(Code::kInternal, "resource version " + rv + " is in the future");
        e.reason = "Timeout";
        e.http = 504;
      }
      s->push(event_line("ERROR", status_json(e)));
      s->end();
      out.watch = std::move(stream);
      return out;
    }
    out.response = error_reply(from_code(h.error().code(), h.error().message()));
    return out;
  }
  s->handle_ = std::move(h).value();
  out.watch = std::move(stream);
  return out;
}

}  // namespace draplane::server
