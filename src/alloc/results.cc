// Assembles AllocationResults from the search's picks: result order, request
// names, configs (class configs once per class, then claim configs) and the
// node selector, as upstream's Allocate does after a successful search.
#include <algorithm>
#include <set>

#include "alloc/internal/search.h"

namespace draplane::alloc::internal {
namespace {

bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

bool same_requirement(const api::NodeSelectorRequirement& a, const api::NodeSelectorRequirement& b) {
  if (a.key != b.key || a.operator_ != b.operator_) return false;
  std::set<std::string> x(a.values.begin(), a.values.end()), y(b.values.begin(), b.values.end());
  return x == y;
}

void add_new(const std::vector<api::NodeSelectorRequirement>& from, std::vector<api::NodeSelectorRequirement>& to) {
  for (const auto& r : from) {
    bool found = false;
    for (const auto& e : to) found = found || same_requirement(e, r);
    if (!found) to.push_back(r);
  }
}

}  // namespace

std::vector<api::AllocationResult> Search::build_results() {
  std::vector<api::AllocationResult> out(claims_.size());
  for (size_t ci = 0; ci < claims_.size(); ++ci) {
    const auto& claim = *claims_[ci];
    api::AllocationResult& ar = out[ci];
    // Node selector: the node when any device is node-local; else one term
    // with every requirement of the used slices' (or devices') selectors.
    bool node_local = false;
    api::NodeSelectorTerm term;
    for (const Picked& p : picked_[ci]) {
      const ReqData& r = reqs_[p.req];
      uint32_t dev = view_.candidates()[p.cand].device;
      const auto& d = snap_.device(dev);
      const auto& slice = snap_.slice_of(dev);
      api::DeviceRequestAllocationResult res;
      res.request = r.full;
      res.driver = slice.spec.driver;
      res.pool = slice.spec.pool.name;
      res.device = d.name;
      if (p.admin) res.adminAccess = true;
      res.tolerations = *r.tolerations;
      res.bindingConditions = d.bindingConditions;
      res.bindingFailureConditions = d.bindingFailureConditions;
      if (p.multi) res.shareID = new_share_id(p.cand);
      res.consumedCapacity = p.consumed;
      ar.devices.results.push_back(std::move(res));

      const std::optional<std::string>* node_name;
      const std::optional<api::NodeSelector>* selector;
      if (slice.spec.perDeviceNodeSelection.value_or(false)) {
        node_name = &d.nodeName;
        selector = &d.nodeSelector;
      } else {
        node_name = &slice.spec.nodeName;
        selector = &slice.spec.nodeSelector;
      }
      if ((node_name->has_value() && !(*node_name)->empty()) || d.bindsToNode.value_or(false)) node_local = true;
      if (!node_local && selector->has_value() && (*selector)->nodeSelectorTerms.size() == 1) {
        add_new((*selector)->nodeSelectorTerms[0].matchFields, term.matchFields);
        add_new((*selector)->nodeSelectorTerms[0].matchExpressions, term.matchExpressions);
      }
    }
    if (node_local) {
      api::NodeSelector ns;
      api::NodeSelectorTerm t;
      t.matchFields.push_back(api::NodeSelectorRequirement{"metadata.name", "In", {view_.node().metadata.name}});
      ns.nodeSelectorTerms.push_back(std::move(t));
      ar.nodeSelector = std::move(ns);
    } else if (!term.matchFields.empty() || !term.matchExpressions.empty()) {
      api::NodeSelector ns;
      ns.nodeSelectorTerms.push_back(std::move(term));
      ar.nodeSelector = std::move(ns);
    }

    // Configs.
    const auto& requests = claim.spec.devices.requests;
    auto chosen = [&](size_t ri) -> const ReqData& {
      const Slot& s = slots_[ci][ri];
      return reqs_[s.first + (s.has_subs ? s.selected : 0)];
    };
    auto& configs = ar.devices.config;
    std::vector<std::pair<std::string, std::pair<size_t, size_t>>> class_ranges;
    for (size_t ri = 0; ri < requests.size(); ++ri) {
      const ReqData& r = chosen(ri);
      auto it = std::find_if(class_ranges.begin(), class_ranges.end(),
                             [&](const auto& e) { return e.first == r.class_name; });
      if (it != class_ranges.end()) {
        for (size_t i = it->second.first; i < it->second.second; ++i) configs[i].requests.push_back(r.full);
        continue;
      }
      size_t start = configs.size();
      for (const auto& c : r.cls->cls.spec.config) {
        api::DeviceAllocationConfiguration dc;
        dc.source = "FromClass";
        dc.requests = {r.full};
        dc.opaque = c.opaque;
        configs.push_back(std::move(dc));
      }
      class_ranges.emplace_back(r.class_name, std::make_pair(start, configs.size()));
    }
    // Claim configs: Kubernetes 1.36 appends a config once per request (or
    // chosen subrequest) it names, so a config naming two requests appears twice.
    for (const auto& c : claim.spec.devices.config) {
      auto append = [&] {
        api::DeviceAllocationConfiguration dc;
        dc.source = "FromClaim";
        dc.requests = c.requests;
        dc.opaque = c.opaque;
        configs.push_back(std::move(dc));
      };
      if (c.requests.empty()) {
        append();
        continue;
      }
      for (size_t ri = 0; ri < requests.size(); ++ri) {
        if (contains(c.requests, requests[ri].name)) {
          append();
          continue;
        }
        if (slots_[ci][ri].has_subs && contains(c.requests, chosen(ri).full)) append();
      }
    }
  }
  return out;
}

}  // namespace draplane::alloc::internal
