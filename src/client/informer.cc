#include "client/informer.h"

#include <pthread.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <spdlog/spdlog.h>

#include <chrono>
#include <set>

#include "api/codec.h"
#include "api/codec_tree.h"

namespace draplane::client {
namespace {

std::string to_text(const rapidjson::Value& v) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  v.Accept(w);
  return std::string(buf.GetString(), buf.GetSize());
}

std::string member_string(const rapidjson::Value& v, const char* key) {
  if (!v.IsObject()) return "";
  auto it = v.FindMember(key);
  if (it == v.MemberEnd() || !it->value.IsString()) return "";
  return std::string(it->value.GetString(), it->value.GetStringLength());
}

std::string key_of(const rapidjson::Value& obj) {
  if (!obj.IsObject()) return "";
  auto md = obj.FindMember("metadata");
  if (md == obj.MemberEnd()) return "";
  std::string ns = member_string(md->value, "namespace");
  std::string name = member_string(md->value, "name");
  return ns.empty() ? name : ns + "/" + name;
}

std::string rv_of(const rapidjson::Value& obj) {
  auto md = obj.IsObject() ? obj.FindMember("metadata") : obj.MemberEnd();
  if (!obj.IsObject() || md == obj.MemberEnd()) return "";
  return member_string(md->value, "resourceVersion");
}

// Items of a list come without apiVersion/kind.
void ensure_type(rapidjson::Value& obj, rapidjson::Document::AllocatorType& a, const std::string& api_version,
                 const std::string& kind) {
  if (!obj.IsObject()) return;
  if (!obj.HasMember("apiVersion")) obj.AddMember("apiVersion", rapidjson::Value(api_version.c_str(), a), a);
  if (!obj.HasMember("kind")) obj.AddMember("kind", rapidjson::Value(kind.c_str(), a), a);
}

void strip_managed_fields(rapidjson::Value& obj) {
  if (!obj.IsObject()) return;
  auto md = obj.FindMember("metadata");
  if (md != obj.MemberEnd() && md->value.IsObject()) md->value.RemoveMember("managedFields");
}

std::string with_query(const std::string& path, const std::string& query) {
  return path + (path.find('?') == std::string::npos ? "?" : "&") + query;
}

std::string url_escape(const std::string& s) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(hex[c >> 4]);
      out.push_back(hex[c & 15]);
    }
  }
  return out;
}

}  // namespace

std::string object_key(const std::string& json) {
  rapidjson::Document doc;
  doc.Parse(json.data(), json.size());
  if (doc.HasParseError()) return "";
  return key_of(doc);
}

template <typename T>
Result<T> decode_json_value(const rapidjson::Value& object) {
  return api::object_as<T>(api::decode_tree(object));
}
template Result<api::Pod> decode_json_value<api::Pod>(const rapidjson::Value&);
template Result<api::Job> decode_json_value<api::Job>(const rapidjson::Value&);
template Result<api::Node> decode_json_value<api::Node>(const rapidjson::Value&);
template Result<api::Namespace> decode_json_value<api::Namespace>(const rapidjson::Value&);
template Result<api::DeviceClass> decode_json_value<api::DeviceClass>(const rapidjson::Value&);
template Result<api::ResourceSlice> decode_json_value<api::ResourceSlice>(const rapidjson::Value&);
template Result<api::ResourceClaim> decode_json_value<api::ResourceClaim>(const rapidjson::Value&);
template Result<api::ResourceClaimTemplate> decode_json_value<api::ResourceClaimTemplate>(const rapidjson::Value&);
template Result<api::DeviceTaintRule> decode_json_value<api::DeviceTaintRule>(const rapidjson::Value&);
template Result<api::Deployment> decode_json_value<api::Deployment>(const rapidjson::Value&);
template Result<api::PodGroup> decode_json_value<api::PodGroup>(const rapidjson::Value&);
template Result<api::ReplicaSet> decode_json_value<api::ReplicaSet>(const rapidjson::Value&);

namespace {

// The process's drop counts and the kinds already logged.
struct DecodeErrorLedger {
  std::mutex mu;
  std::map<std::string, uint64_t> counts;
  std::set<std::string> logged;
};

DecodeErrorLedger& ledger() {
  static DecodeErrorLedger l;
  return l;
}

}  // namespace

void RawInformer::decode_failed(const std::string& json, const Status& error) const {
  ++decode_errors_;
  bool first;
  {
    auto& l = ledger();
    std::lock_guard<std::mutex> lock(l.mu);
    ++l.counts[options_.kind];
    first = l.logged.insert(options_.kind).second;
  }
  auto log = options_.logger ? options_.logger : spdlog::default_logger();
  const std::string key = object_key(json);
  if (first) {
    log->warn("informer {}: dropping {} {} that cannot be decoded: {} (later ones of this kind are counted in "
              "draplane_informer_decode_errors_total, not logged)",
              options_.path, options_.kind, key.empty() ? "<no key>" : key, error.message());
  } else {
    log->debug("informer {}: dropping {} {}: {}", options_.path, options_.kind, key, error.message());
  }
}

std::map<std::string, uint64_t> informer_decode_errors() {
  auto& l = ledger();
  std::lock_guard<std::mutex> lock(l.mu);
  return l.counts;
}

std::string render_informer_metrics() {
  std::string out =
      "# HELP draplane_informer_decode_errors_total Objects the process's informers dropped because they could not "
      "be decoded, by kind.\n# TYPE draplane_informer_decode_errors_total counter\n";
  for (const auto& [kind, n] : informer_decode_errors()) {
    out += "draplane_informer_decode_errors_total{kind=\"" + kind + "\"} " + std::to_string(n) + "\n";
  }
  return out;
}

RawInformer::RawInformer(RestClient& client, Options options) : client_(client), options_(std::move(options)) {}

RawInformer::~RawInformer() { stop(); }

void RawInformer::add_handler(Handler handler) { handlers_.push_back(std::move(handler)); }

void RawInformer::add_value_handler(ValueHandler handler) { value_handlers_.push_back(std::move(handler)); }

void RawInformer::decode_failed(const rapidjson::Value& object, const Status& error) const {
  decode_failed(to_text(object), error);
}

void RawInformer::start() {
  stop_ = false;
  thread_ = std::thread([this] {
    pthread_setname_np(pthread_self(), "informer");
    run();
  });
}

void RawInformer::stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

bool RawInformer::wait_synced(int timeout_ms) const {
  std::unique_lock<std::mutex> lock(mu_);
  return synced_cv_.wait_for(lock, std::chrono::milliseconds(timeout_ms), [this] { return synced_.load(); });
}

std::optional<std::string> RawInformer::get(const std::string& key) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = items_.find(key);
  if (it == items_.end() || !options_.keep_json) return std::nullopt;
  return it->second.json;
}

std::vector<std::string> RawInformer::list() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> out;
  if (!options_.keep_json) return out;
  out.reserve(items_.size());
  for (const auto& [k, v] : items_) out.push_back(v.json);
  return out;
}

std::string RawInformer::resource_version() const {
  std::lock_guard<std::mutex> lock(mu_);
  return rv_;
}

void RawInformer::apply(EventType type, const std::string& key, const rapidjson::Value* object, std::string json,
                        std::string object_rv, const std::string& rv) {
  if (json.empty() && object != nullptr && (options_.keep_json || !handlers_.empty())) json = to_text(*object);
  std::string old;
  bool known;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = items_.find(key);
    known = it != items_.end();
    if (known) old = std::move(it->second.json);
    if (type == EventType::kDeleted) {
      if (known) items_.erase(it);
    } else {
      Item& item = known ? it->second : items_[key];
      item.resource_version = std::move(object_rv);
      if (options_.keep_json) item.json = json;
    }
    if (!rv.empty()) rv_ = rv;
  }
  if (type == EventType::kModified && !known) type = EventType::kAdded;
  for (const auto& h : handlers_) h(type, key, old, json);
  for (const auto& h : value_handlers_) h(type, key, object);
}

Result<std::string> RawInformer::list_and_replace() {
  std::string path = options_.path;
  if (!options_.label_selector.empty()) path = with_query(path, "labelSelector=" + url_escape(options_.label_selector));
  if (!options_.field_selector.empty()) path = with_query(path, "fieldSelector=" + url_escape(options_.field_selector));
  ASSIGN_OR_RETURN(std::string body, client_.get(path));
  rapidjson::Document doc;
  doc.Parse(body.data(), body.size());
  if (doc.HasParseError() || !doc.IsObject()) return Status(Code::kUnavailable, "list " + path + ": bad JSON");
  std::string list_rv;
  auto md = doc.FindMember("metadata");
  if (md != doc.MemberEnd()) list_rv = member_string(md->value, "resourceVersion");
  struct Fresh {
    Item item;  // its JSON only when kept
    const rapidjson::Value* object;
  };
  std::map<std::string, Fresh> fresh;
  auto items = doc.FindMember("items");
  if (items != doc.MemberEnd() && items->value.IsArray()) {
    for (auto& item : items->value.GetArray()) {
      ensure_type(item, doc.GetAllocator(), options_.api_version, options_.kind);
      if (options_.strip_managed_fields) strip_managed_fields(item);
      fresh[key_of(item)] = Fresh{Item{rv_of(item), options_.keep_json ? to_text(item) : std::string()}, &item};
    }
  }
  // Report the differences with what handlers saw before (relist after a gap):
  // an object whose resourceVersion moved was modified (every write moves it).
  std::map<std::string, Item> before;
  {
    std::lock_guard<std::mutex> lock(mu_);
    before = items_;
  }
  for (auto& [key, item] : before) {
    if (!fresh.count(key)) {
      // The last state known; none when JSON is not kept. Parsed back only
      // for value handlers (Informer<T>'s, which keep no JSON: none so far).
      std::optional<rapidjson::Document> last;
      if (options_.keep_json && !value_handlers_.empty()) {
        last.emplace();
        last->Parse(item.json.data(), item.json.size());
      }
      apply(EventType::kDeleted, key, last && !last->HasParseError() ? &*last : nullptr, std::move(item.json), "", "");
    }
  }
  for (auto& [key, f] : fresh) {
    auto it = before.find(key);
    if (it == before.end()) {
      apply(EventType::kAdded, key, f.object, std::move(f.item.json), std::move(f.item.resource_version), "");
    } else if (it->second.resource_version != f.item.resource_version ||
               (options_.keep_json && it->second.json != f.item.json)) {
      apply(EventType::kModified, key, f.object, std::move(f.item.json), std::move(f.item.resource_version), "");
    }
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    rv_ = list_rv;
  }
  if (!synced_.exchange(true)) {
    std::lock_guard<std::mutex> lock(mu_);
    synced_cv_.notify_all();
  }
  return list_rv;
}

Result<void> RawInformer::watch_from(const std::string& rv) {
  std::string path = with_query(options_.path, "watch=1&allowWatchBookmarks=true&resourceVersion=" + rv);
  if (!options_.label_selector.empty()) path += "&labelSelector=" + url_escape(options_.label_selector);
  if (!options_.field_selector.empty()) path += "&fieldSelector=" + url_escape(options_.field_selector);
  Status failure;
  auto st = client_.watch(path, [&](std::string_view line) {
    rapidjson::Document ev;
    ev.Parse(line.data(), line.size());
    if (ev.HasParseError() || !ev.IsObject()) return true;
    std::string type = member_string(ev, "type");
    auto obj = ev.FindMember("object");
    if (obj == ev.MemberEnd()) return true;
    if (type == "ERROR") {
      int code = 0;
      if (obj->value.IsObject() && obj->value.HasMember("code") && obj->value["code"].IsInt()) {
        code = obj->value["code"].GetInt();
      }
      failure = Status(code == 410 ? Code::kGone : Code::kUnavailable, member_string(obj->value, "message"));
      return false;
    }
    std::string event_rv = rv_of(obj->value);
    if (type == "BOOKMARK") {
      std::lock_guard<std::mutex> lock(mu_);
      if (!event_rv.empty()) rv_ = event_rv;
      return true;
    }
    ensure_type(obj->value, ev.GetAllocator(), options_.api_version, options_.kind);
    if (options_.strip_managed_fields) strip_managed_fields(obj->value);
    EventType et = type == "ADDED" ? EventType::kAdded
                                   : (type == "DELETED" ? EventType::kDeleted : EventType::kModified);
    apply(et, key_of(obj->value), &obj->value, "", event_rv, event_rv);
    return true;
  }, &stop_, 200);
  if (!st.has_value()) return st;
  if (!failure.ok()) return failure;
  return {};
}

void RawInformer::run() {
  std::string rv;
  bool need_list = true;
  while (!stop_) {
    if (need_list) {
      auto listed = list_and_replace();
      if (!listed.has_value()) {
        for (int waited = 0; waited < options_.relist_backoff_ms && !stop_; waited += 50) {
          std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
        continue;
      }
      rv = *listed;
      need_list = false;
    }
    auto st = watch_from(rv);
    if (stop_) break;
    if (!st.has_value()) {
      // Gone: history compacted, relist. Other errors: back off, then resume
      // from the last seen version (relisting if that fails with Gone).
      if (st.error().code() != Code::kGone) {
        for (int waited = 0; waited < options_.relist_backoff_ms && !stop_; waited += 50) {
          std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
        rv = resource_version();
        continue;
      }
      need_list = true;
      continue;
    }
    rv = resource_version();  // clean end (timeout): resume
  }
}

}  // namespace draplane::client
