#!/usr/bin/python3
"""The official Python client (python3-kubernetes) against draplane server:
create, list and watch ResourceClaims through its generated kubeconfig.

The Debian package's client predates resource.k8s.io/v1, so claims go through
the generic ApiClient.call_api with plain dicts (what the typed ResourceV1Api
does underneath); namespaces use the typed CoreV1Api.
Usage: server_python.py KUBECONFIG
"""
import sys
import threading

from kubernetes import client, config, watch

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
print("python client: ok", seen)
