#!/usr/bin/env bash
# `kubectl explain` (which reads the OpenAPI v3 documents: /openapi/v3 and
# /openapi/v3/apis/<group>/<version>) against `draplane server`: fields with
# their types and descriptions for claims, classes, slices and pods, every
# served kind, older versions; and `kubectl create --validate=strict`, which
# finds server-side field validation in the same documents.
# Usage: server_explain.sh DRAPLANE_BINARY SOURCE_DIR
BIN="$1"
SRC="$2"
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/server_common.sh"
start_api_server_for_kubectl "$BIN"
k() { kubectl --cache-dir "$work/cache" "$@"; }

tab=$'\t'
expect "claim requests: kind" "KIND:       ResourceClaim" k explain resourceclaim.spec.devices.requests
expect "claim requests: field" "FIELD: requests <[]DeviceRequest>" k explain resourceclaim.spec.devices.requests
expect "claim requests: name" "name${tab}<string> -required-" k explain resourceclaim.spec.devices.requests
expect "claim requests: exactly" "exactly${tab}<ExactDeviceRequest>" k explain resourceclaim.spec.devices.requests
expect "claim requests: firstAvailable" "firstAvailable${tab}<[]DeviceSubRequest>" k explain resourceclaim.spec.devices.requests
expect "claim requests: description" "Requests represent individual requests for distinct devices" k explain resourceclaim.spec.devices.requests
expect "claim count" "FIELD: count <integer>" k explain resourceclaims.spec.devices.requests.exactly.count
expect "claim allocationMode" "AllocationMode and its related fields define how devices are allocated" k explain resourceclaims.spec.devices.requests.exactly.allocationMode
expect "claim status" "reservedFor${tab}<[]ResourceClaimConsumerReference>" k explain resourceclaims.status
expect "pods" "spec${tab}<PodSpec>" k explain pods
expect "pods description" "Pod is a collection of containers that can run on a host" k explain pods
expect "pod resource claims" "resourceClaimTemplateName${tab}<string>" k explain pods.spec.resourceClaims
expect "container claims" "request${tab}<string>" k explain pods.spec.containers.resources.claims
expect "deviceclass" "spec${tab}<DeviceClassSpec> -required-" k explain deviceclass
expect "deviceclass cel" "expression${tab}<string> -required-" k explain deviceclasses.spec.selectors.cel
expect "slice devices" "attributes${tab}<map[string]DeviceAttribute>" k explain resourceslices.spec.devices
expect "slice devices recursive" "    effect${tab}<string> -required-" k explain resourceslices.spec.devices --recursive
expect "slice quantity" "value${tab}<Quantity> -required-" k explain resourceslices.spec.devices.capacity
expect "v1beta1 flat requests" "deviceClassName${tab}<string>" k explain resourceclaims.spec.devices.requests --api-version=resource.k8s.io/v1beta1
expect "v1beta1 basic devices" "basic${tab}<BasicDevice>" k explain resourceslices.spec.devices --api-version=resource.k8s.io/v1beta1
expect "v1beta2 requests" "VERSION:    v1beta2" k explain resourceclaims.spec.devices.requests --api-version=resource.k8s.io/v1beta2
expect "metadata" "labels${tab}<map[string]string>" k explain resourceclaimtemplates.metadata
expect "unknown field" 'field "nosuch" does not exist' k explain resourceclaims.spec.nosuch
# The v2 document (protobuf, as kubectl reads it) renders the same schemas.
expect "v2 claim requests" "firstAvailable${tab}<[]Object>" k explain resourceclaim.spec.devices.requests --output plaintext-openapiv2
expect "v2 pod claims" "resourceClaimName${tab}<string>" k explain pods.spec.resourceClaims --output plaintext-openapiv2

# Every served kind explains.
for r in $(k api-resources -o name); do
  if [ "$r" = events.events.k8s.io ]; then
    # kubectl takes the prefix "events" for the core resource and the rest for
    # a field path; the group's version has to be named instead.
    expect "explain $r" "metadata${tab}<ObjectMeta>" k explain events --api-version=events.k8s.io/v1
    continue
  fi
  expect "explain $r" "metadata${tab}<ObjectMeta>" k explain "$r"
done

# Server-side field validation, found in the v3 PATCH operation's parameters.
cat >"$work/unknown.yaml" <<'YAML'
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: strict-check}
spec:
  selectors:
  - cel: {expression: "true", exprssion: "x"}
YAML
expect "create --validate=strict" 'unknown field "spec.selectors[0].cel.exprssion"' k create --validate=strict -f "$work/unknown.yaml"
expect "create examples" "deviceclass.resource.k8s.io/gpu.nvidia.com created" k create --validate=strict -f "$SRC/examples/gpu/deviceclasses.yaml"
# Client-side apply computes its patch from the v3 schemas.
expect "apply examples" "deviceclass.resource.k8s.io/gpu.nvidia.com configured" k apply -f "$SRC/examples/gpu/deviceclasses.yaml"
expect "apply again" "deviceclass.resource.k8s.io/gpu.nvidia.com unchanged" k apply -f "$SRC/examples/gpu/deviceclasses.yaml"

[ "$FAILURES" -eq 0 ] || { echo "$FAILURES failure(s)"; exit 1; }
echo "all explain checks passed"
