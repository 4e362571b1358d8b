"""KAI Scheduler's Queue (scheduling.run.ai/v2) for src/server/openapi_types.json:
hand-written from KAI's Go types (pkg/apis/scheduling/v2: queue_types.go,
resources.go, status.go) and their comments, in the shape gen_openapi_types.py
emits (KAI's package has no generated swagger docs to read). Named like the
Kubernetes groups' definitions (io.k8s.api.<first label>.<version>.<Kind>), which is
how the server finds a served kind's schema.

gen_openapi_types.py merges these; `python3 scripts/kai_queue_types.py` prints
them as the lines it would write.
"""
import json

P = "io.k8s.api.scheduling.v2."
META = "io.k8s.apimachinery.pkg.apis.meta.v1."
QTY = "io.k8s.apimachinery.pkg.api.resource.Quantity"
KIND = ("Kind is a string value representing the REST resource this object represents. Servers may infer this from "
        "the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: "
        "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds")
API_VERSION = ("APIVersion defines the versioned schema of this representation of an object. Servers should convert "
               "recognized schemas to the latest internal value, and may reject unrecognized values. More info: "
               "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources")
OBJECT_META = ("Standard object's metadata. More info: "
               "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata")
LIST_META = ("Standard list metadata. More info: "
             "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata")


def field(name, typ, description, required=False, list_type="", map_type=""):
    return {"name": name, "type": typ, "description": description, "required": required, "enum": [],
            "list_type": list_type, "list_map_keys": [], "map_type": map_type, "patch_strategy": "",
            "patch_merge_key": ""}


def definition(name, description, fields):
    return {"name": P + name, "description": description, "map_type": "", "fields": fields}


def resource(name, what):
    return field(name, P + "QueueResource", what)


TYPES = [
    definition("Queue", "Queue is the Schema for the queues API", [
        field("kind", "string", KIND), field("apiVersion", "string", API_VERSION),
        field("metadata", META + "ObjectMeta", OBJECT_META),
        field("spec", P + "QueueSpec", "QueueSpec defines the desired state of Queue"), field("status", P + "QueueStatus", "QueueStatus defines the observed state of Queue")]),
    definition("QueueList", "QueueList contains a list of Queue", [
        field("kind", "string", KIND), field("apiVersion", "string", API_VERSION),
        field("metadata", META + "ListMeta", LIST_META), field("items", "[]" + P + "Queue", "The queues.", required=True)]),
    definition("QueueSpec", "QueueSpec defines the desired state of Queue", [
        field("displayName", "string", "A name for logs and displays."),
        field("parentQueue", "string", "The queue whose share this queue divides with its siblings (hierarchical queues)."),
        field("resources", P + "QueueResources", "Quota, over-quota weight and limit of GPU, CPU and memory."),
        field("priority", "integer", "Priority of the queue. Over-quota resources will be divided first among queues "
              "with higher priority. Queues with higher priority will be considerd first for allocation, and last for "
              "reclaim. When not set, default is 100."),
        field("preemptMinRuntime", "string", "Minimum runtime of a job in queue before it can be preempted."),
        field("reclaimMinRuntime", "string", "Minimum runtime of a job in queue before it can be reclaimed.")]),
    definition("QueueResources", "QueueResources holds the GPU, CPU and memory settings of a queue.", [
        resource("gpu", "GPU resources in fractions. 0.7 = 70% of a gpu"),
        resource("cpu", "CPU resources in millicpus. 1000 = 1 cpu"),
        resource("memory", "Memory resources in megabytes. 1 = 10^6  (1000*1000) bytes")]),
    definition("QueueResource", "QueueResource is the quota, over-quota weight and limit of one resource.", [
        field("quota", "double", "Guaranteed amount; -1 for unlimited, 0 or unset for none."), field("overQuotaWeight", "double", "Weight of the queue in dividing what is idle beyond the quotas, within its priority."), field("limit", "double", "Hard cap on the amount; -1 for no limit.")]),
    definition("QueueStatus", "QueueStatus defines the observed state of Queue", [
        field("conditions", "[]" + P + "QueueCondition", "Current conditions of the queue"),
        field("childQueues", "[]string", "List of queues in cluster which specify this queue as parent"),
        field("allocated", "map[]" + QTY, "Current allocated GPU (in fractions), CPU (in millicpus) and Memory in "
              "megabytes for all running jobs in queue and child queues"),
        field("allocatedNonPreemptible", "map[]" + QTY, "Current allocated GPU (in fractions), CPU (in millicpus) and "
              "Memory in megabytes for all non-preemptible running jobs in queue and child queues"),
        field("requested", "map[]" + QTY, "Current requested GPU (in fractions), CPU (in millicpus) and Memory in "
              "megabytes by all running and pending jobs in queue and child queues")]),
    definition("QueueCondition", "QueueCondition is one condition of a queue (Orphan, OverQuota).", [
        field("type", "string", "Type is the type of the condition.", required=True),
        field("status", "string", "Status is the status of the condition. Can be True, False, Unknown.",
              required=True),
        field("lastProbeTime", META + "Time", "Last time we probed the condition."),
        field("lastTransitionTime", META + "Time", "Last time the condition transitioned from one status to another."),
        field("reason", "string", "Unique, one-word, CamelCase reason for the condition's last transition."),
        field("message", "string", "Human-readable message indicating details about last transition.")]),
]

if __name__ == "__main__":
    for t in TYPES:
        fields = []
        for f in t["fields"]:
            out = {"name": f["name"], "type": f["type"], "description": f["description"]}
            if f["required"]:
                out["required"] = True
            fields.append(json.dumps(out, ensure_ascii=False))
        print(json.dumps({"name": t["name"], "description": t["description"]}, ensure_ascii=False)[:-1] +
              ', "fields": [\n' + ",\n".join(fields) + "\n]},")
