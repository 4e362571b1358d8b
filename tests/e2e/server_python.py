#!/usr/bin/python3
"""The official Python client (python3-kubernetes) against draplane server:
create, list and watch ResourceClaims through its generated kubeconfig, with
the generic ApiClient, the dynamic client (whose watch sends `watch=True`) and
the typed CoreV1Api's pod watch; and the query parameters it sends, read as
kube-apiserver reads them.

The Debian package's client predates resource.k8s.io/v1, so claims go through
the generic ApiClient.call_api with plain dicts (what the typed ResourceV1Api
does underneath); namespaces use the typed CoreV1Api.
Usage: server_python.py KUBECONFIG
"""
import json
import sys
import threading

from kubernetes import client, config, watch
from kubernetes.dynamic import DynamicClient

config.load_kube_config(config_file=sys.argv[1])
api = client.ApiClient()
core = client.CoreV1Api(api)
names = [ns.metadata.name for ns in core.list_namespace().items]
assert "default" in names and "kube-system" in names, names

PATH = "/apis/resource.k8s.io/v1/namespaces/default/resourceclaims"


def call(method, path, body=None, query=None):
    return api.call_api(path, method, body=body, query_params=query or [],
                        header_params={"Content-Type": "application/json", "Accept": "application/json"},
                        auth_settings=["BearerToken"], response_type="object", _return_http_data_only=True)


def claim(name):
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": name},
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]}}}


start_rv = call("GET", PATH)["metadata"]["resourceVersion"]
seen = []


def list_claims(watch=False, resource_version=None, timeout_seconds=None, _preload_content=True):
    """The shape of a generated list_* method, so that watch.Watch can drive it."""
    query = [("watch", "true")] if watch else []
    if resource_version:
        query.append(("resourceVersion", resource_version))
    if timeout_seconds:
        query.append(("timeoutSeconds", str(timeout_seconds)))
    return api.call_api(PATH, "GET", query_params=query, auth_settings=["BearerToken"], response_type="object",
                        _return_http_data_only=True, _preload_content=_preload_content)


def watcher():
    w = watch.Watch()
    for ev in w.stream(list_claims, resource_version=start_rv, timeout_seconds=10):
        seen.append((ev["type"], ev["object"]["metadata"]["name"]))
        if len(seen) >= 3:
            w.stop()


t = threading.Thread(target=watcher)
t.start()
created = call("POST", PATH, claim("py-1"))
assert created["metadata"]["uid"], created
call("POST", PATH, claim("py-2"))
listed = [c["metadata"]["name"] for c in call("GET", PATH)["items"]]
assert listed == ["py-1", "py-2"], listed
call("DELETE", PATH + "/py-1")
t.join(15)
assert seen == [("ADDED", "py-1"), ("ADDED", "py-2"), ("DELETED", "py-1")], seen
try:
    call("POST", PATH, claim("py-2"))
    raise SystemExit("duplicate create succeeded")
except client.ApiException as e:
    assert e.status == 409, e.status

# ---- the dynamic client: watch.Watch() over resource.get sends watch=True.
dyn = DynamicClient(api)
claims = dyn.resources.get(api_version="resource.k8s.io/v1", kind="ResourceClaim")
rv0 = claims.get(namespace="default").metadata.resourceVersion
dyn_seen = []


def dyn_watcher():
    w = watch.Watch()
    for ev in claims.watch(namespace="default", resource_version=rv0, timeout=10, watcher=w):
        obj = ev["object"]
        dyn_seen.append((ev["type"], obj.metadata.name, obj.metadata.resourceVersion))
        if len(dyn_seen) >= 3:
            w.stop()


t = threading.Thread(target=dyn_watcher)
t.start()
claims.create(body=claim("dyn-1"), namespace="default")
claims.patch(body={"metadata": {"labels": {"app": "a"}}}, name="dyn-1", namespace="default",
             content_type="application/merge-patch+json")
claims.delete(name="dyn-1", namespace="default")
t.join(15)
assert [(typ, name) for typ, name, _ in dyn_seen] == [("ADDED", "dyn-1"), ("MODIFIED", "dyn-1"),
                                                       ("DELETED", "dyn-1")], dyn_seen

# A watch that resumes from the MODIFIED event's resourceVersion sees only what followed.
resumed = []
w = watch.Watch()
for ev in claims.watch(namespace="default", resource_version=dyn_seen[1][2], timeout=5, watcher=w):
    resumed.append((ev["type"], ev["object"].metadata.name))
    w.stop()
assert resumed == [("DELETED", "dyn-1")], resumed

# Set-based label selectors and field selectors with != and commas, as kube-apiserver parses them.
claims.create(body=dict(claim("sel-a"), metadata={"name": "sel-a", "labels": {"app": "a"}}), namespace="default")
claims.create(body=dict(claim("sel-b"), metadata={"name": "sel-b", "labels": {"app": "b"}}), namespace="default")


def selected(**kw):
    return sorted(c.metadata.name for c in claims.get(namespace="default", **kw).items)


assert selected(label_selector="app in (a,b)") == ["sel-a", "sel-b"], selected(label_selector="app in (a,b)")
assert selected(label_selector="app notin (a)") == ["py-2", "sel-b"]
assert selected(label_selector="!app") == ["py-2"]
assert selected(label_selector="app,app!=b") == ["sel-a"]
assert selected(field_selector="metadata.name!=sel-a,metadata.name!=py-2") == ["sel-b"]

# ---- the typed client: CoreV1Api.list_namespaced_pod driven by watch.Watch().
v1 = client.CoreV1Api(api)
pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "py-pod"},
       "spec": {"containers": [{"name": "c", "image": "busybox"}]}}
pod_rv = v1.list_namespaced_pod("default").metadata.resource_version
pod_seen = []


def pod_watcher():
    w = watch.Watch()
    for ev in w.stream(v1.list_namespaced_pod, "default", resource_version=pod_rv, timeout_seconds=10):
        assert isinstance(ev["object"], client.V1Pod), type(ev["object"])
        pod_seen.append((ev["type"], ev["object"].metadata.name))
        if ev["type"] == "DELETED":
            w.stop()


t = threading.Thread(target=pod_watcher)
t.start()
v1.create_namespaced_pod("default", pod)
v1.delete_namespaced_pod("py-pod", "default", grace_period_seconds=0)
t.join(15)
assert pod_seen and pod_seen[0] == ("ADDED", "py-pod") and pod_seen[-1] == ("DELETED", "py-pod"), pod_seen

# list_namespaced_pod(watch=True) itself: the stream of events, not a PodList.
v1.create_namespaced_pod("default", dict(pod, metadata={"name": "py-pod-2"}))
raw = v1.list_namespaced_pod("default", watch=True, timeout_seconds=1, _preload_content=False)
events = [json.loads(line) for line in raw.read().decode().splitlines() if line.strip()]
# (The scheduler in `draplane server` may mark the pod unschedulable meanwhile: MODIFIED.)
assert events and (events[0]["type"], events[0]["object"]["metadata"]["name"]) == ("ADDED", "py-pod-2"), events
assert all(e["type"] in ("ADDED", "MODIFIED") and e["object"]["metadata"]["name"] == "py-pod-2" for e in events)


# ---- bad query parameters are 400s naming the problem, never a silent default.
def status_of(query):
    try:
        call("GET", PATH, query=query)
    except client.ApiException as e:
        return e.status, json.loads(e.body)["message"]
    return 200, ""


assert status_of([("limit", "abc")]) == (400, 'strconv.ParseInt: parsing "abc": invalid syntax'), \
    status_of([("limit", "abc")])
assert status_of([("resourceVersion", "abc")]) == (
    400, 'invalid resource version: resourceVersion: Invalid value: "abc": strconv.ParseUint: parsing "abc": '
         'invalid syntax'), status_of([("resourceVersion", "abc")])
assert status_of([("resourceVersion", str(2 ** 70))])[0] == 400
assert status_of([("resourceVersionMatch", "Exact")])[0] == 422
assert status_of([("labelSelector", "app in a")]) == (
    400, "unable to parse requirement: found 'a' expected: '('"), status_of([("labelSelector", "app in a")])
print("python client: ok", seen, dyn_seen, pod_seen)
