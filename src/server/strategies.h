// The strategies of the served kinds (strategy.h), registered with their
// resources in resources.cc. One file per kind or family:
// namespace_strategy.cc, node_strategy.cc, pod_strategy.cc, event_strategy.cc,
// dra_strategies.cc (resource.k8s.io), lease_strategy.cc,
// priority_class_strategy.cc; the typed kinds build on typed_strategy.h.
#pragma once

#include "server/strategy.h"

namespace draplane::server {

const Strategy& namespace_strategy();
const Strategy& node_strategy();
const Strategy& pod_strategy();
const Strategy& event_strategy();
const Strategy& device_class_strategy();
const Strategy& resource_claim_strategy();
const Strategy& resource_claim_template_strategy();
const Strategy& resource_slice_strategy();
const Strategy& device_taint_rule_strategy();
// core/v1 ConfigMap, Secret, ServiceAccount, Service, PersistentVolumeClaim (config_strategies.cc).
const Strategy& config_map_strategy();
const Strategy& secret_strategy();
const Strategy& service_account_strategy();
const Strategy& service_strategy();
const Strategy& persistent_volume_claim_strategy();
// apps/v1 Deployment, ReplicaSet; batch/v1 Job (workload_strategies.cc).
const Strategy& deployment_strategy();
const Strategy& replica_set_strategy();
const Strategy& job_strategy();
const Strategy& stateful_set_strategy();  // untyped
const Strategy& daemon_set_strategy();    // untyped
// spec.selector (a LabelSelector) as its text form, "app=web,tier in (a,b)":
// the Selector column and a Scale's status.selector.
std::string label_selector_text(const JsonValue& obj);
const Strategy& lease_strategy();
const Strategy& priority_class_strategy();
const Strategy& queue_strategy();
// scheduling.k8s.io/v1beta1 Workload and PodGroup (pod_group_strategies.cc).
const Strategy& workload_strategy();
const Strategy& pod_group_strategy();

}  // namespace draplane::server
