#include "sched/plugins/queues.h"

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <type_traits>
#include <variant>

#include "api/pod_group_claims.h"
#include "api/workload.h"
#include "sched/cluster_cache.h"
#include "sched/pod_claims.h"

namespace draplane::sched::plugins {
namespace {


const rapidjson::Value* member(const rapidjson::Value& v, const char* name) {
  if (!v.IsObject()) return nullptr;
  auto it = v.FindMember(name);
  return it == v.MemberEnd() ? nullptr : &it->value;
}

// A number member (KAI's CRD: number); `def` when absent.
Result<double> number(const rapidjson::Value& v, const char* name, const std::string& path, double def) {
  const rapidjson::Value* m = member(v, name);
  if (m == nullptr || m->IsNull()) return def;
  if (!m->IsNumber()) return draplane::Status(Code::kInvalid, path + "." + name + ": Invalid value: must be a number");
  return m->GetDouble();
}

std::string milli_quantity(int64_t milli) {
  if (milli % 1000 == 0) return std::to_string(milli / 1000);
  return std::to_string(milli) + "m";
}

void put_amounts(rapidjson::Writer<rapidjson::StringBuffer>& w, const char* name, const fair::Amounts& a) {
  w.Key(name);
  w.StartObject();
  w.Key("cpu");
  w.String(milli_quantity(a[fair::kCpu]).c_str());
  w.Key("memory");
  w.String(std::to_string(a[fair::kMemory]).c_str());
  w.Key("nvidia.com/gpu");
  w.String(milli_quantity(a[fair::kGpu]).c_str());
  w.EndObject();
}

// Devices a pending request asks for (the first alternative of a prioritized list).
int64_t requested_devices(const api::DeviceRequest& r) {
  const api::ExactDeviceRequest* ex = r.exactly ? &*r.exactly : nullptr;
  if (ex == nullptr && !r.firstAvailable.empty()) {
    const auto& sub = r.firstAvailable.front();
    return sub.allocationMode == "All" ? 1 : std::max<int64_t>(1, sub.count.value_or(1));
  }
  if (ex == nullptr) return 0;
  return ex->allocationMode == "All" ? 1 : std::max<int64_t>(1, ex->count.value_or(1));
}

}  // namespace

std::string queue_of(const api::Pod& pod) {
  auto it = pod.metadata.labels.find(fair::kQueueLabel);
  return it == pod.metadata.labels.end() ? std::string() : it->second;
}

Result<QueueConfig> parse_queue(std::string_view json) {
  rapidjson::Document d;
  d.Parse(json.data(), json.size());
  if (d.HasParseError() || !d.IsObject()) return draplane::Status(Code::kInvalid, "queue: not a JSON object");
  QueueConfig q;
  if (const auto* meta = member(d, "metadata"); meta != nullptr) {
    if (const auto* n = member(*meta, "name"); n != nullptr && n->IsString()) q.name = n->GetString();
  }
  if (q.name.empty()) return draplane::Status(Code::kInvalid, "queue: metadata.name: Required value");
  const rapidjson::Value* spec = member(d, "spec");
  if (spec == nullptr) return q;
  if (const auto* p = member(*spec, "parentQueue"); p != nullptr && p->IsString()) q.parent = p->GetString();
  if (const auto* p = member(*spec, "priority"); p != nullptr && p->IsInt64()) q.priority = p->GetInt64();
  const rapidjson::Value* resources = member(*spec, "resources");
  for (int r = 0; r < fair::kResources; ++r) {
    const rapidjson::Value* res = resources != nullptr ? member(*resources, fair::kResourceNames[r]) : nullptr;
    if (res == nullptr) {
      // Not given: nothing guaranteed, no cap, the default weight.
      q.resources[r] = fair::ResourceSpec{0, fair::kUnlimited, 1};
      continue;
    }
    const std::string path = "spec.resources." + std::string(fair::kResourceNames[r]);
    auto quota = number(*res, "quota", path, 0);
    auto limit = number(*res, "limit", path, 0);
    auto weight = number(*res, "overQuotaWeight", path, 1);
    for (const auto* v : {&quota, &limit, &weight}) {
      if (!v->has_value()) return v->error();
    }
    q.resources[r] = fair::from_kai_units(static_cast<fair::Resource>(r), *quota, *limit, *weight);
  }
  return q;
}

std::string queue_status_json(const QueueReport& report) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  w.StartObject();
  put_amounts(w, "allocated", report.allocated);
  put_amounts(w, "requested", report.requested);
  put_amounts(w, "fairShare", report.fair_share);
  w.Key("childQueues");
  w.StartArray();
  for (const auto& c : report.children) w.String(c.c_str());
  w.EndArray();
  w.EndObject();
  return buf.GetString();
}

void KaiQueues::on_event(const Event& event) {
  // Allocatable CPU and memory may have changed (kept even without queues: a
  // first queue would read it).
  if (std::holds_alternative<api::Node>(event.object)) capacity_.reset();
  if (queues_.empty()) return;  // no shares to keep
  dirty_ = true;
  std::visit(
      [&](const auto& obj) {
        using T = std::decay_t<decltype(obj)>;
        if constexpr (std::is_same_v<T, api::Pod>) {
          const std::string key = object_key(obj.metadata);
          forget(key);
          // The pods sharing a claim with it carry another part of it now.
          forget_sharers(obj);
          if (const api::Pod* old = h_.cache->pod(key)) forget_sharers(*old);
        } else if constexpr (std::is_same_v<T, api::ResourceClaim>) {
          if (const auto* pods = h_.cache->pods_naming_claim(object_key(obj.metadata))) {
            for (const auto& k : *pods) forget(k);
          }
        } else if constexpr (std::is_same_v<T, api::ResourceSlice> || std::is_same_v<T, api::DeviceClass>) {
          amounts_.clear();  // fractions of devices may differ
          recount_all_ = true;
        }
      },
      event.object);
}

void KaiQueues::forget_sharers(const api::Pod& pod) {
  auto each = [&](const std::optional<std::string>& name) {
    if (!name || name->empty()) return;
    if (const auto* pods = h_.cache->pods_naming_claim(pod.metadata.namespace_ + "/" + *name)) {
      for (const auto& k : *pods) forget(k);
    }
  };
  for (const auto& rc : pod.spec.resourceClaims) each(rc.resourceClaimName);
  for (const auto& st : pod.status.resourceClaimStatuses) each(st.resourceClaimName);
}

const fair::Amounts& KaiQueues::amounts_of(const std::string& key, const api::Pod& pod) {
  auto it = amounts_.find(key);
  if (it == amounts_.end()) it = amounts_.emplace(key, pod_amounts(pod)).first;
  return it->second;
}

bool KaiQueues::upsert(QueueConfig queue) {
  if (auto it = queues_.find(queue.name); it != queues_.end() && it->second == queue) return false;
  std::string name = queue.name;
  // Without queues no event was followed: what was remembered may be stale.
  if (queues_.empty()) amounts_.clear();
  // A new queue takes in pods that counted nowhere; a changed one only moves shares.
  const bool added = queues_.insert_or_assign(std::move(name), std::move(queue)).second;
  if (added) recount_all_ = true;
  dirty_ = true;
  return true;
}

void KaiQueues::erase(const std::string& name) {
  if (queues_.erase(name) > 0) recount_all_ = true;
}

int64_t KaiQueues::allocated_gpu_milli(const api::AllocationResult& allocation) const {
  ClusterCache& cache = *h_.cache;
  const alloc::Snapshot& snap = cache.snapshot();
  int64_t total = 0;
  for (const auto& r : allocation.devices.results) {
    const api::Device* dev = nullptr;
    const api::ResourceSlice* dev_slice = nullptr;
    const auto& slices = snap.slices_of_pool(r.driver, r.pool);
    for (uint32_t s : slices) {
      for (const auto& d : snap.slices()[s].spec.devices) {
        if (d.name == r.device) {
          dev = &d;
          dev_slice = &snap.slices()[s];
        }
      }
    }
    if (dev == nullptr) {
      total += 1000;  // gone from the inventory: counted whole
      continue;
    }
    if (!r.consumedCapacity.empty()) {
      // A share: the fraction of the device's capacity it consumes.
      const auto& [cap, used] = *r.consumedCapacity.begin();
      auto it = dev->capacity.find(cap);
      total += fair::gpu_fraction_milli(used.value(), it == dev->capacity.end() ? 0 : it->second.value.value());
      continue;
    }
    if (dev->consumesCounters.empty()) {
      total += 1000;
      continue;
    }
    // A partition: the fraction of the physical GPU's memory counter.
    const auto& use = dev->consumesCounters.front();
    std::string counter = use.counters.count("memory") ? "memory" : (use.counters.empty() ? "" : use.counters.begin()->first);
    int64_t consumed = counter.empty() ? 0 : use.counters.at(counter).value.value();
    int64_t of = 0;
    for (uint32_t s : slices) {
      for (const auto& set : snap.slices()[s].spec.sharedCounters) {
        if (set.name != use.counterSet) continue;
        auto c = set.counters.find(counter);
        if (c != set.counters.end()) of = c->second.value.value();
      }
    }
    (void)dev_slice;
    total += fair::gpu_fraction_milli(consumed, of);
  }
  return total;
}

fair::Amounts KaiQueues::pod_amounts(const api::Pod& pod) const {
  fair::Amounts a{};
  for (const auto& c : pod.spec.containers) {
    auto cpu = c.resources.requests.find("cpu");
    if (cpu != c.resources.requests.end()) a[fair::kCpu] += cpu->second.milli_value();
    auto mem = c.resources.requests.find("memory");
    if (mem != c.resources.requests.end()) a[fair::kMemory] += mem->second.value();
  }
  ResolvedClaims rc = resolve_claims(pod, *h_.cache);
  for (size_t k = 0; k < rc.keys.size(); ++k) {
    const api::ResourceClaim* claim = h_.cache->claim(rc.keys[k]);
    if (claim == nullptr) continue;
    int64_t gpu = 0;
    if (claim->status.allocation) {
      gpu = allocated_gpu_milli(*claim->status.allocation);
    } else {
      for (const auto& r : claim->spec.devices.requests) gpu += 1000 * requested_devices(r);
    }
    // A claim its PodGroup shares (KEP-5729) is one set of devices for the
    // whole gang: each of the minCount members it is placed for carries its
    // part (rounded up), not all of it.
    if (api::is_pod_group_consumer(rc.consumers[k])) {
      const api::PodGroup* g = h_.cache->pod_group(pod.metadata.namespace_ + "/" + rc.consumers[k].name);
      const int64_t members = g != nullptr ? std::max<int64_t>(1, api::gang_min_count(g->spec.schedulingPolicy)) : 1;
      gpu = (gpu + members - 1) / members;
    } else if (const auto* users = h_.cache->pods_naming_claim(rc.keys[k]); users != nullptr && users->size() > 1) {
      // Shared by pods that each name it: divided among the active ones.
      int64_t active = 0;
      for (const auto& key : *users) {
        const api::Pod* p = h_.cache->pod(key);
        if (p != nullptr && pod_is_active(*p)) ++active;
      }
      if (active > 1) gpu = (gpu + active - 1) / active;
    }
    a[fair::kGpu] += gpu;
  }
  return a;
}

const fair::Amounts& KaiQueues::capacity() {
  ClusterCache& cache = *h_.cache;
  const alloc::Snapshot& snapshot = cache.snapshot();
  if (capacity_ && capacity_builds_ == cache.snapshot_builds()) return *capacity_;
  fair::Amounts& cap = capacity_.emplace();
  capacity_builds_ = cache.snapshot_builds();
  for (const auto& [name, node] : cache.nodes()) {
    auto cpu = node.status.allocatable.find("cpu");
    if (cpu != node.status.allocatable.end()) cap[fair::kCpu] += cpu->second.milli_value();
    auto mem = node.status.allocatable.find("memory");
    if (mem != node.status.allocatable.end()) cap[fair::kMemory] += mem->second.value();
  }
  for (const auto& slice : snapshot.slices()) {
    for (const auto& d : slice.spec.devices) {
      if (d.consumesCounters.empty()) cap[fair::kGpu] += 1000;
    }
    cap[fair::kGpu] += 1000 * static_cast<int64_t>(slice.spec.sharedCounters.size());
  }
  return cap;
}

void KaiQueues::add_to_totals(const Counted& c, int sign) {
  Totals& t = totals_[c.queue];
  for (int r = 0; r < fair::kResources; ++r) {
    const int64_t a = sign * c.amounts[r];
    t.demand[r] += a;
    (c.bound ? t.allocated : t.pending)[r] += a;
    if (c.bound && c.terminating) t.releasing[r] += a;
    if (c.nominated) t.nominated[r] += a;
  }
  t.pending_pods += c.bound ? 0 : sign;
  t.releasing_pods += c.bound && c.terminating ? sign : 0;
  t.nominated_pods += c.nominated ? sign : 0;
}

void KaiQueues::count(const std::string& key) {
  ClusterCache& cache = *h_.cache;
  const api::Pod* p = cache.pod(key);
  if (p == nullptr || !pod_is_active(*p)) return;
  Counted c;
  c.queue = queue_of(*p);
  if (c.queue.empty() || queues_.count(c.queue) == 0) return;
  c.bound = !cache.bound_node(key).empty();
  c.terminating = !p->metadata.deletionTimestamp.empty();
  if (!c.bound && c.terminating) return;
  c.nominated = !c.bound && !p->status.nominatedNodeName.empty();
  c.amounts = amounts_of(key, *p);
  add_to_totals(c, +1);
  counted_[key] = std::move(c);
}

void KaiQueues::uncount(const std::string& key) {
  auto it = counted_.find(key);
  if (it == counted_.end()) return;
  add_to_totals(it->second, -1);
  counted_.erase(it);
}

void KaiQueues::refresh() {
  if (!dirty_ && !recount_all_ && dirty_pods_.empty()) return;
  ClusterCache& cache = *h_.cache;
  if (recount_all_) {
    counted_.clear();
    totals_.clear();
    for (const auto& [key, p] : cache.pods()) count(key);
    recount_all_ = false;
  } else {
    for (const auto& key : dirty_pods_) {
      uncount(key);
      count(key);
    }
  }
  dirty_pods_.clear();
  dirty_ = false;
  std::map<std::string, fair::QueueInput> inputs;
  for (const auto& [name, q] : queues_) {
    fair::QueueInput in;
    in.name = name;
    in.parent = q.parent;
    in.priority = q.priority;
    in.resources = q.resources;
    inputs.emplace(name, std::move(in));
  }
  pending_.clear();
  releasing_.clear();
  nominated_.clear();
  for (const auto& [q, t] : totals_) {
    auto it = inputs.find(q);
    if (it == inputs.end()) continue;
    it->second.demand = t.demand;
    it->second.allocated = t.allocated;
    if (t.pending_pods > 0) pending_[q] = t.pending;
    if (t.releasing_pods > 0) releasing_[q] = t.releasing;
    if (t.nominated_pods > 0) nominated_[q] = t.nominated;
  }
  std::vector<fair::QueueInput> list;
  for (auto& [name, in] : inputs) list.push_back(std::move(in));
  shares_.clear();
  for (auto& s : fair::compute_fair_shares(list, capacity())) {
    std::string name = s.name;
    shares_.emplace(std::move(name), std::move(s));
  }
}

std::optional<fair::QueueShare> KaiQueues::share(const std::string& queue) {
  refresh();
  auto it = shares_.find(queue);
  if (it == shares_.end()) return std::nullopt;
  return it->second;
}

framework::Status KaiQueues::pre_filter(framework::CycleState& cs) {
  const std::string q = queue_of(cs.pod);
  if (q.empty()) return {};
  refresh();
  auto spec = queues_.find(q);
  // Unresolvable: no eviction makes the queue take the pod. Past its limit or
  // share it is not: evicting pods of lower priority in the same queue (or
  // reclaiming) may make room, so PostFilter looks for victims.
  if (spec == queues_.end()) return framework::Status::unresolvable("queue \"" + q + "\" does not exist");
  for (const auto& [name, other] : queues_) {
    if (other.parent == q) {
      return framework::Status::unresolvable("queue \"" + q + "\" has child queues; only leaf queues take pods");
    }
  }
  const fair::QueueShare& share = shares_.at(q);
  if (share.orphaned) {
    return framework::Status::unresolvable("queue \"" + q + "\" has no parent queue \"" + spec->second.parent + "\"");
  }
  const fair::Amounts need = amounts_of(cs.pod_key, cs.pod);
  bool over = false;
  int over_r = 0;
  for (int r = 0; r < fair::kResources; ++r) {
    if (need[r] == 0) continue;
    const int64_t after = share.allocated[r] + need[r];
    const int64_t limit = spec->second.resources[r].limit;
    if (limit != fair::kUnlimited && after > limit) {
      return framework::Status::unschedulable("queue \"" + q + "\" would exceed its " + fair::kResourceNames[r] + " limit");
    }
    const int64_t quota = spec->second.resources[r].quota;
    if (after > share.fair_share[r] && (quota != fair::kUnlimited && after > quota) && !over) {
      over = true;
      over_r = r;
    }
  }
  if (!over) return {};
  // Over its fair share: waits while a queue owed capacity has pods waiting.
  for (const auto& [name, pending] : pending_) {
    if (name == q) continue;
    auto s = shares_.find(name);
    if (s == shares_.end() || s->second.orphaned) continue;
    for (int r = 0; r < fair::kResources; ++r) {
      if (pending[r] > 0 && s->second.allocated[r] < s->second.fair_share[r]) {
        return framework::Status::unschedulable("queue \"" + q + "\" is at its fair share of " + fair::kResourceNames[over_r] +
                                     " while queue \"" + name + "\" waits below its own");
      }
    }
  }
  return {};
}

bool KaiQueues::may_reclaim(const api::Pod& preemptor, const api::Pod& victim) {
  const std::string qa = queue_of(preemptor), qb = queue_of(victim);
  if (qa.empty() || qb.empty() || qa == qb) return false;
  auto sa = queues_.find(qa), sb = queues_.find(qb);
  if (sa == queues_.end() || sb == queues_.end()) return false;
  refresh();
  // A victim already leaving is gone as far as the what-if is concerned (as
  // kube-scheduler removes terminating pods with the other victims); its
  // share was taken off its queue already.
  if (!victim.metadata.deletionTimestamp.empty()) return true;
  return reclaim_from(preemptor, qa, qb, amounts_of(object_key(victim.metadata), victim));
}

bool KaiQueues::may_reclaim_all(const api::Pod& preemptor, const std::vector<const api::Pod*>& victims) {
  const std::string qa = queue_of(preemptor);
  if (qa.empty() || !queues_.count(qa)) return victims.empty();
  refresh();
  std::map<std::string, fair::Amounts> freed;  // per victim queue, by the victims not leaving yet
  for (const api::Pod* v : victims) {
    const std::string qb = queue_of(*v);
    if (qb.empty() || qb == qa || !queues_.count(qb)) return false;
    if (!v->metadata.deletionTimestamp.empty()) continue;
    fair::Amounts& f = freed[qb];
    const fair::Amounts& a = amounts_of(object_key(v->metadata), *v);
    for (int r = 0; r < fair::kResources; ++r) f[r] += a[r];
  }
  for (const auto& [qb, f] : freed) {
    if (!reclaim_from(preemptor, qa, qb, f)) return false;
  }
  return true;
}

bool KaiQueues::reclaim_from(const api::Pod& preemptor, const std::string& qa, const std::string& qb,
                             const fair::Amounts& freed) {
  auto quota = [](const QueueConfig& q) {
    fair::Amounts a{};
    for (int r = 0; r < fair::kResources; ++r) a[r] = q.resources[r].quota;
    return a;
  };
  // As the queues will stand once the evictions under way are done.
  fair::QueueShare a = shares_.at(qa), b = shares_.at(qb);
  auto adjust = [](fair::QueueShare& s, const std::map<std::string, fair::Amounts>& m, const std::string& q, int sign) {
    auto it = m.find(q);
    if (it == m.end()) return;
    for (int r = 0; r < fair::kResources; ++r) s.allocated[r] += sign * it->second[r];
  };
  adjust(a, nominated_, qa, +1);
  adjust(b, releasing_, qb, -1);
  fair::ReclaimSide reclaimer{&a, quota(queues_.at(qa))};
  fair::ReclaimSide from{&b, quota(queues_.at(qb))};
  return fair::reclaim_allowed(reclaimer, amounts_of(object_key(preemptor.metadata), preemptor), from, freed);
}

std::vector<QueueReport> KaiQueues::reports() {
  refresh();
  std::vector<QueueReport> out;
  for (const auto& [name, q] : queues_) {
    QueueReport r;
    r.name = name;
    const fair::QueueShare& s = shares_.at(name);
    r.allocated = s.allocated;
    r.requested = s.demand;
    r.fair_share = s.fair_share;
    for (const auto& [child, c] : queues_) {
      if (c.parent == name) r.children.push_back(child);
    }
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace draplane::sched::plugins
