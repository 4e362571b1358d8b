// The fuzz targets build the server's parsers (selectors, query parameters,
// protobuf bodies) without the kinds' strategies: those pull in CEL, the typed
// codec's validation and the registry. Every kind gets the default strategy
// here, so field selectors are fuzzed with its metadata.name/namespace rules
// (the per-kind field paths are covered by server_test).
#include "server/strategies.h"

namespace draplane::server {

const Strategy& namespace_strategy() { return default_strategy(); }
const Strategy& node_strategy() { return default_strategy(); }
const Strategy& pod_strategy() { return default_strategy(); }
const Strategy& event_strategy() { return default_strategy(); }
const Strategy& device_class_strategy() { return default_strategy(); }
const Strategy& resource_claim_strategy() { return default_strategy(); }
const Strategy& resource_claim_template_strategy() { return default_strategy(); }
const Strategy& resource_slice_strategy() { return default_strategy(); }
const Strategy& device_taint_rule_strategy() { return default_strategy(); }
const Strategy& config_map_strategy() { return default_strategy(); }
const Strategy& secret_strategy() { return default_strategy(); }
const Strategy& service_account_strategy() { return default_strategy(); }
const Strategy& service_strategy() { return default_strategy(); }
const Strategy& persistent_volume_claim_strategy() { return default_strategy(); }
const Strategy& deployment_strategy() { return default_strategy(); }
const Strategy& replica_set_strategy() { return default_strategy(); }
const Strategy& job_strategy() { return default_strategy(); }
const Strategy& stateful_set_strategy() { return default_strategy(); }
const Strategy& daemon_set_strategy() { return default_strategy(); }
const Strategy& lease_strategy() { return default_strategy(); }
const Strategy& priority_class_strategy() { return default_strategy(); }
const Strategy& queue_strategy() { return default_strategy(); }
const Strategy& workload_strategy() { return default_strategy(); }
const Strategy& pod_group_strategy() { return default_strategy(); }

}  // namespace draplane::server
