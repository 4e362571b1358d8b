// The object codec (api/codec.h) on the objects the end-to-end run moves most:
// a running pod as the API server stores it (managedFields included) and an
// allocated, reserved ResourceClaim. Every component decodes or encodes each
// such object several times per pod (the server per write, every informer per
// watch event), so these are the per-object costs behind cluster_bench.
//
//   BM_ParseJson/<kind>   JSON text -> the codec's document tree only
//   BM_Decode/<kind>      JSON text -> typed object (decode_as), as informers do
//   BM_Encode/<kind>      typed object -> JSON text (to_json)
// Counter bytes_per_second: of the JSON text.
#include <benchmark/benchmark.h>

#include <string>

#include "api/codec.h"
#include "api/internal/json_value.h"

namespace draplane::api {
namespace {

constexpr const char* kPod = R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p-1234","namespace":"bench",
"uid":"3f0c1d2e-8a7b-4c5d-9e0f-112233445566","resourceVersion":"123456","creationTimestamp":"2026-12-06T03:40:01Z",
"labels":{"app":"bench","job":"train"},"managedFields":[{"manager":"cluster_bench","operation":"Update","apiVersion":"v1",
"time":"2026-12-06T03:40:01Z","fieldsType":"FieldsV1","fieldsV1":{"f:spec":{"f:containers":{"k:{\"name\":\"c\"}":{".":{},
"f:command":{},"f:image":{},"f:name":{},"f:resources":{"f:claims":{}}}},"f:resourceClaims":{},"f:restartPolicy":{}}}},
{"manager":"draplane-kubelet","operation":"Update","apiVersion":"v1","time":"2026-12-06T03:40:02Z","fieldsType":"FieldsV1",
"fieldsV1":{"f:status":{"f:conditions":{},"f:containerStatuses":{},"f:phase":{},"f:startTime":{}}},"subresource":"status"}]},
"spec":{"restartPolicy":"Never","schedulerName":"default-scheduler","nodeName":"node-17","containers":[{"name":"c",
"image":"busybox","command":["sleep","1"],"resources":{"claims":[{"name":"gpu"}]},"terminationMessagePath":"/dev/termination-log",
"imagePullPolicy":"Always"}],"resourceClaims":[{"name":"gpu","resourceClaimTemplateName":"one-gpu"}],"tolerations":[{"key":
"node.kubernetes.io/not-ready","operator":"Exists","effect":"NoExecute","tolerationSeconds":300}]},"status":{"phase":"Running",
"conditions":[{"type":"PodScheduled","status":"True","lastTransitionTime":"2026-12-06T03:40:01Z"},{"type":"Ready",
"status":"True","lastTransitionTime":"2026-12-06T03:40:02Z"}],"resourceClaimStatuses":[{"name":"gpu",
"resourceClaimName":"p-1234-gpu-x7k2q"}],"startTime":"2026-12-06T03:40:02Z","containerStatuses":[{"name":"c","ready":true,
"restartCount":0,"image":"busybox","imageID":"","state":{"running":{"startedAt":"2026-12-06T03:40:02Z"}}}]}})";

constexpr const char* kClaim = R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":{
"name":"p-1234-gpu-x7k2q","namespace":"bench","uid":"8d1f0e2a-3b4c-4d5e-8f60-718293a4b5c6","resourceVersion":"123460",
"creationTimestamp":"2026-12-06T03:40:01Z","finalizers":["resource.kubernetes.io/delete-protection"],
"annotations":{"resource.kubernetes.io/pod-claim-name":"gpu"},"ownerReferences":[{"apiVersion":"v1","kind":"Pod",
"name":"p-1234","uid":"3f0c1d2e-8a7b-4c5d-9e0f-112233445566","controller":true,"blockOwnerDeletion":true}]},
"spec":{"devices":{"requests":[{"name":"gpu","exactly":{"deviceClassName":"gpu.nvidia.com","allocationMode":"ExactCount",
"count":1}}]}},"status":{"allocation":{"devices":{"results":[{"request":"gpu","driver":"gpu.nvidia.com","pool":"node-17",
"device":"gpu-3"}],"config":[{"source":"FromClass","requests":["gpu"],"opaque":{"driver":"gpu.nvidia.com",
"parameters":{"apiVersion":"resource.nvidia.com/v1beta1","kind":"GpuConfig","sharing":{"strategy":"TimeSlicing"}}}}]},
"nodeSelector":{"nodeSelectorTerms":[{"matchFields":[{"key":"metadata.name","operator":"In","values":["node-17"]}]}]},
"allocationTimestamp":"2026-12-06T03:40:01Z"},"reservedFor":[{"resource":"pods","name":"p-1234",
"uid":"3f0c1d2e-8a7b-4c5d-9e0f-112233445566"}]}})";

const char* text_of(int which) { return which == 0 ? kPod : kClaim; }
const char* label_of(int which) { return which == 0 ? "pod" : "claim"; }

// Runs `step` (text -> Result) on the kind's JSON text each iteration.
template <typename Step>
void on_text(benchmark::State& state, Step step) {
  const std::string text = text_of(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    auto r = step(text);
    if (!r.has_value()) state.SkipWithError(r.error().message().c_str());
    benchmark::DoNotOptimize(r);
  }
  state.SetLabel(label_of(static_cast<int>(state.range(0))));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
}

void BM_ParseJson(benchmark::State& state) { on_text(state, internal::parse_json); }
BENCHMARK(BM_ParseJson)->Arg(0)->Arg(1);

void BM_Decode(benchmark::State& state) { on_text(state, decode_object); }
BENCHMARK(BM_Decode)->Arg(0)->Arg(1);

void BM_Encode(benchmark::State& state) {
  const std::string text = text_of(static_cast<int>(state.range(0)));
  Result<Object> obj = decode_object(text);
  if (!obj.has_value()) {
    state.SkipWithError(obj.error().message().c_str());
    return;
  }
  size_t bytes = 0;
  for (auto _ : state) {
    std::string out = to_json(*obj);
    bytes += out.size();
    benchmark::DoNotOptimize(out);
  }
  state.SetLabel(label_of(static_cast<int>(state.range(0))));
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
}
BENCHMARK(BM_Encode)->Arg(0)->Arg(1);

}  // namespace
}  // namespace draplane::api

BENCHMARK_MAIN();
