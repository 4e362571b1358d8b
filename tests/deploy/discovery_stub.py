"""A stand-in for an API server's discovery endpoints, so that kubectl's client
dry run (which maps each kind to its resource through discovery, and for apply
GETs the live object) runs here without a cluster. It answers /api, /apis and
the resource lists of the groups the deploy/ manifests use; every other GET is
a 404 Status (the object does not exist yet). Usage: discovery_stub.py PORTFILE
(writes the port it listens on, serves until killed)."""
import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

VERBS = ["create", "delete", "get", "list", "patch", "update", "watch"]


def res(name, kind, namespaced):
    return {"name": name, "singularName": kind.lower(), "namespaced": namespaced, "kind": kind, "verbs": VERBS}


GROUPS = {
    "admissionregistration.k8s.io/v1": [
        res("validatingadmissionpolicies", "ValidatingAdmissionPolicy", False),
        res("validatingadmissionpolicybindings", "ValidatingAdmissionPolicyBinding", False),
    ],
    "apps/v1": [res("daemonsets", "DaemonSet", True), res("deployments", "Deployment", True)],
    "rbac.authorization.k8s.io/v1": [
        res("clusterroles", "ClusterRole", False),
        res("clusterrolebindings", "ClusterRoleBinding", False),
        res("roles", "Role", True),
        res("rolebindings", "RoleBinding", True),
    ],
    "resource.k8s.io/v1": [
        res("deviceclasses", "DeviceClass", False),
        res("resourceslices", "ResourceSlice", False),
        res("resourceclaims", "ResourceClaim", True),
    ],
}
CORE = [res("namespaces", "Namespace", False), res("serviceaccounts", "ServiceAccount", True),
        res("nodes", "Node", False), res("pods", "Pod", True)]


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def reply(self, code, body):
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        path = self.path.split("?")[0]
        if path == "/api":
            return self.reply(200, {"kind": "APIVersions", "versions": ["v1"], "serverAddressByClientCIDRs": []})
        if path == "/api/v1":
            return self.reply(200, {"kind": "APIResourceList", "groupVersion": "v1", "resources": CORE})
        if path == "/apis":
            groups = []
            for gv in GROUPS:
                g, v = gv.split("/")
                ver = {"groupVersion": gv, "version": v}
                groups.append({"name": g, "versions": [ver], "preferredVersion": ver})
            return self.reply(200, {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})
        if path.startswith("/apis/") and path[len("/apis/"):] in GROUPS:
            gv = path[len("/apis/"):]
            return self.reply(200, {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv,
                                    "resources": GROUPS[gv]})
        self.reply(404, {"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "NotFound",
                         "code": 404, "message": "not found"})


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
with open(sys.argv[1] + ".tmp", "w") as f:
    f.write(str(server.server_address[1]))
import os
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
server.serve_forever()
