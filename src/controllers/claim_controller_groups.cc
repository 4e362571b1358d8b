// ClaimController's PodGroup part (KEP-5729): claims made from a group's
// templates, recorded in the group's status; see claim_controller.h.
#include <algorithm>

#include "api/codec.h"
#include "api/pod_group_claims.h"
#include "api/workload.h"
#include "client/resource_path.h"
#include "controllers/claim_controller.h"
#include "controllers/claim_logic.h"

namespace draplane::controllers {
namespace {

using client::resources::kPodGroups;
using client::resources::kResourceClaims;
using client::resources::kResourceClaimTemplates;

bool made_for(const api::ResourceClaim& claim, const api::PodGroup& group, const std::string& entry) {
  auto o = api::owning_pod_group(claim);
  auto a = claim.metadata.annotations.find(kPodClaimNameAnnotation);
  return o && o->uid == group.metadata.uid && a != claim.metadata.annotations.end() && a->second == entry;
}

}  // namespace

void ClaimController::on_pod_group(const api::PodGroup& group, bool deleted) {
  const std::string key = group.metadata.namespace_ + "/" + group.metadata.name;
  std::set<std::string> members, claims;
  {
    std::lock_guard<std::mutex> l(mu_);
    const auto& m = groups_of_pods_.keys_of(key);
    members.insert(m.begin(), m.end());
    if (deleted) {
      // Its reservations go; its generated claims go with it (ownerReferences).
      const auto& c = pod_uids_of_claims_.keys_of(group.metadata.uid);
      claims.insert(c.begin(), c.end());
      auto it = group_created_.lower_bound({group.metadata.uid, ""});
      while (it != group_created_.end() && it->first.first == group.metadata.uid) it = group_created_.erase(it);
    }
  }
  if (!deleted && group.metadata.deletionTimestamp.empty() && !group.spec.resourceClaims.empty()) {
    workers_.queue().add(std::string("podgroup:") + key);
  }
  // Members learn the group's claims (or that the group exists at all).
  for (const auto& p : members) workers_.queue().add("pod:" + p);
  for (const auto& c : claims) workers_.queue().add("claim:" + c);
}

Result<std::optional<std::string>> ClaimController::group_claim_name(const api::PodGroup& group,
                                                                     const api::PodGroupResourceClaim& gc,
                                                                     bool verify) {
  const std::string& ns = group.metadata.namespace_;
  std::string stale;  // named by the status but gone (or not the group's): made again, the entry replaced
  for (const auto& s : group.status.resourceClaimStatuses) {
    if (s.name != gc.name || !s.resourceClaimName) continue;
    if (!verify) return s.resourceClaimName;
    stale = *s.resourceClaimName;
    ASSIGN_OR_RETURN(auto c, lookup(claims_, kResourceClaims.ns(ns).name(stale), ns + "/" + stale));
    if (c && made_for(*c, group, gc.name)) return s.resourceClaimName;
    break;
  }
  std::lock_guard<std::mutex> l(mu_);
  if (auto it = group_created_.find({group.metadata.uid, gc.name}); it != group_created_.end()) {
    if (it->second != stale) return {it->second};
    group_created_.erase(it);
  }
  // Made earlier but not recorded (the status write failed, or the cache lags).
  for (const auto& ck : pod_uids_of_claims_.keys_of(group.metadata.uid)) {
    auto c = claims_.get(ck);
    if (c && c->metadata.name != stale && c->metadata.deletionTimestamp.empty() && made_for(*c, group, gc.name)) {
      return {c->metadata.name};
    }
  }
  return {std::nullopt};
}

Result<std::string> ClaimController::ensure_group_template_claim(const api::PodGroup& group,
                                                                 const api::PodGroupResourceClaim& gc) {
  const std::string& ns = group.metadata.namespace_;
  const std::string& tname = *gc.resourceClaimTemplateName;
  std::optional<api::ResourceClaimTemplate> tmpl = templates_.get(ns + "/" + tname);
  if (!tmpl) {
    auto body = rest_.get(kResourceClaimTemplates.ns(ns).name(tname));
    if (!body.has_value()) {
      return Status(body.error().code(), "podgroup " + ns + "/" + group.metadata.name + ": spec.resourceClaims[" +
                                             gc.name + "].resourceClaimTemplateName: resourceclaimtemplate \"" +
                                             tname + "\": " + body.error().message());
    }
    ASSIGN_OR_RETURN(tmpl, api::decode_as<api::ResourceClaimTemplate>(*body));
  }
  api::ResourceClaim claim = claim_from_group_template(group, gc, *tmpl);
  ASSIGN_OR_RETURN(std::string out, rest_.post(kResourceClaims.ns(ns), api::to_json(api::Object(claim))));
  ASSIGN_OR_RETURN(api::ResourceClaim created, api::decode_as<api::ResourceClaim>(out));
  logger_->info("created claim {}/{} for podgroup {} claim {}", ns, created.metadata.name,
                        group.metadata.name, gc.name);
  std::lock_guard<std::mutex> l(mu_);
  group_created_[{group.metadata.uid, gc.name}] = created.metadata.name;
  return created.metadata.name;
}

Result<void> ClaimController::record_group_claim_statuses(const api::PodGroup& group,
                                                          const std::map<std::string, std::string>& names) {
  const client::Path path = kPodGroups.ns(group.metadata.namespace_).name(group.metadata.name);
  for (int attempt = 0; attempt < 8; ++attempt) {
    api::PodGroup cur;
    if (attempt == 0 && !group.metadata.resourceVersion.empty()) {
      cur = group;
    } else {
      ASSIGN_OR_RETURN(std::string body, rest_.get(path));
      ASSIGN_OR_RETURN(cur, api::decode_as<api::PodGroup>(body));
    }
    if (cur.metadata.uid != group.metadata.uid) return {};  // replaced; the new group gets its own sync
    bool changed = false;
    auto& st = cur.status.resourceClaimStatuses;
    for (const auto& [entry, name] : names) {
      auto it = std::find_if(st.begin(), st.end(), [&](const auto& s) { return s.name == entry; });
      if (it == st.end()) {
        st.push_back({entry, name});
        changed = true;
      } else if (it->resourceClaimName != name) {
        it->resourceClaimName = name;  // the claim it named is gone and was made again
        changed = true;
      }
    }
    if (!changed) return {};
    std::sort(st.begin(), st.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
    auto out = rest_.put(path.sub("status"), api::to_json(api::Object(cur)));
    if (out.has_value()) return {};
    if (out.error().code() != Code::kConflict) return out.error();
  }
  return conflict_error("podgroup " + group.metadata.namespace_ + "/" + group.metadata.name +
                        ": status.resourceClaimStatuses: too many concurrent updates");
}

Result<void> ClaimController::sync_pod_group(const std::string& key) {
  auto group = groups_.get(key);
  if (!group || !group->metadata.deletionTimestamp.empty()) return {};
  std::map<std::string, std::string> recorded;
  Status first_error;
  for (const auto& gc : group->spec.resourceClaims) {
    if (!gc.resourceClaimTemplateName) continue;  // a named claim: nothing to make
    ASSIGN_OR_RETURN(auto existing, group_claim_name(*group, gc, /*verify=*/true));
    if (!existing) {
      auto created = ensure_group_template_claim(*group, gc);
      if (!created.has_value()) {
        client::ObjectReference ref{api::kSchedulingV1beta1, "PodGroup", group->metadata.namespace_,
                                    group->metadata.name, group->metadata.uid, "", ""};
        events_.record(ref, "Warning", "FailedResourceClaimCreation", "",
                       "PodGroupResourceClaim " + gc.name + ": " + created.error().message());
        if (first_error.ok()) first_error = created.error();
        continue;
      }
      existing = *created;
    }
    recorded[gc.name] = *existing;
  }
  if (!recorded.empty()) RETURN_IF_ERROR(record_group_claim_statuses(*group, recorded));
  return first_error;
}

}  // namespace draplane::controllers
