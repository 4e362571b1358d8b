#!/usr/bin/env python3
"""The hostile-input probes of issue 22 against a real `draplane server` over TLS:
each gets the answer kube-apiserver would give, within a second, and the server
keeps serving. Usage: server_hostile.py DRAPLANE_BINARY"""
import csv
import json
import os
import re
import shutil
import socket
import ssl
import subprocess
import sys
import tempfile
import time

FAILURES = []


def check(name, ok, detail=""):
    print(("ok   " if ok else "FAIL ") + name + ("" if ok else ": " + detail))
    if not ok:
        FAILURES.append(name)


class Server:
    def __init__(self, binary):
        self.dir = tempfile.mkdtemp(prefix="draplane-hostile-")
        self.log = open(os.path.join(self.dir, "server.log"), "w")
        self.proc = subprocess.Popen([binary, "server", "--data-dir", os.path.join(self.dir, "data"),
                                      "--listen", "127.0.0.1:0", "--nodes", "node-a,node-b"],
                                     stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.time() + 30
        while time.time() < deadline:
            text = open(os.path.join(self.dir, "server.log")).read()
            if re.search(r"^ready$", text, re.M):
                url = re.search(r"listening on https://([\d.]+):(\d+)", text)
                self.host, self.port = url.group(1), int(url.group(2))
                break
            if self.proc.poll() is not None:
                raise SystemExit("server exited early:\n" + text)
            time.sleep(0.1)
        else:
            raise SystemExit("server did not become ready")
        self.tokens = {}
        with open(os.path.join(self.dir, "data", "tokens.csv")) as f:
            for row in csv.reader(f):
                self.tokens[row[1]] = row[0]
        self.ctx = ssl.create_default_context()
        self.ctx.check_hostname = False
        self.ctx.verify_mode = ssl.CERT_NONE

    def connect(self):
        s = socket.create_connection((self.host, self.port), timeout=5)
        return self.ctx.wrap_socket(s, server_hostname="localhost")

    def request(self, method, path, body=b"", token=None, content_type="application/json", timeout=5.0):
        """Sends one request (Connection: close); returns (status, body, seconds)."""
        t0 = time.time()
        s = self.connect()
        s.settimeout(timeout)
        head = f"{method} {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
        if token:
            head += f"Authorization: Bearer {token}\r\n"
        if body or method in ("POST", "PUT", "PATCH"):
            head += f"Content-Type: {content_type}\r\nContent-Length: {len(body)}\r\n"
        data = head.encode() + b"\r\n"
        try:
            s.sendall(data)
            # Large bodies: the server may answer (413) before all of it is sent.
            for i in range(0, len(body), 1 << 20):
                s.sendall(body[i:i + (1 << 20)])
        except (BrokenPipeError, ConnectionResetError, ssl.SSLError, socket.timeout):
            pass
        out = b""
        try:
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                out += chunk
        except (ConnectionResetError, ssl.SSLError, socket.timeout):
            pass
        s.close()
        m = re.match(rb"HTTP/1\.1 (\d+)", out)
        return (int(m.group(1)) if m else 0), out.split(b"\r\n\r\n", 1)[-1], time.time() - t0

    def serving(self):
        code, _, _ = self.request("GET", "/api/v1/namespaces/default", token=self.tokens["admin"])
        return code == 200

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        shutil.rmtree(self.dir, ignore_errors=True)


def main():
    srv = Server(sys.argv[1])
    admin, node_a = srv.tokens["admin"], srv.tokens["system:node:node-a"]
    try:
        # A YAML alias bomb: 400, not 24 GB.
        y = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: bomb\n  annotations:\n"
        y += '    a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
        for i in range(1, 10):
            y += f"    a{i}: &a{i} [" + ",".join([f"*a{i-1}"] * 10) + "]\n"
        code, body, secs = srv.request("POST", "/api/v1/namespaces", y.encode(), admin, "application/yaml")
        check("alias bomb is 400", code == 400 and b"excessive aliasing" in body and secs < 1, f"{code} {body[:200]} {secs:.2f}s")
        check("serving after the alias bomb", srv.serving())

        # JSON nested 150,000 levels: 400, not a stack overflow.
        code, body, secs = srv.request("POST", "/api/v1/namespaces", b"[" * 150000, admin)
        check("deep nesting is 400", code == 400 and b"exceeded max depth" in body and secs < 1, f"{code} {body[:200]} {secs:.2f}s")
        check("serving after deep nesting", srv.serving())

        # A node token's delete-collection of every node's slices: 403, nothing deleted.
        slice_b = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "b-slice"},
                   "spec": {"driver": "gpu.nvidia.com", "nodeName": "node-b",
                            "pool": {"name": "node-b", "generation": 1, "resourceSliceCount": 1},
                            "devices": [{"name": "gpu-0"}]}}
        code, body, _ = srv.request("POST", "/apis/resource.k8s.io/v1/resourceslices", json.dumps(slice_b).encode(), admin)
        check("admin creates node-b's slice", code == 201, f"{code} {body[:200]}")
        code, body, secs = srv.request("DELETE", "/apis/resource.k8s.io/v1/resourceslices", token=node_a)
        check("node delete-collection is 403", code == 403 and secs < 1, f"{code} {body[:200]}")
        code, _, _ = srv.request("GET", "/apis/resource.k8s.io/v1/resourceslices/b-slice", token=admin)
        check("node-b's slice is still there", code == 200, str(code))

        # A 64 MB body: 413 at once, without reading it all.
        code, body, secs = srv.request("POST", "/api/v1/namespaces", b"x" * (64 << 20), admin, timeout=10)
        check("64 MB body is 413", code == 413 and b"RequestEntityTooLarge" in body and secs < 1, f"{code} {body[:200]} {secs:.2f}s")
        check("serving after the 64 MB body", srv.serving())

        # Unauthenticated large upload: 401 without reading the body.
        code, body, secs = srv.request("POST", "/api/v1/namespaces", b"x" * (30 << 20), "not-a-token", timeout=10)
        check("unauthenticated upload is 401", code == 401 and secs < 1, f"{code} {secs:.2f}s")

        # Slowloris: a connection that trickles its header is not held for ever,
        # and the server serves others meanwhile.
        s = srv.connect()
        s.sendall(b"GET /api/v1/namespaces HTTP/1.1\r\nHost: x\r\n")
        check("serving during slowloris", srv.serving())
        s.close()

        # text/plain body: 415, not stored.
        code, body, _ = srv.request("POST", "/api/v1/namespaces",
                                    b'{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"plain"}}', admin,
                                    "text/plain")
        check("text/plain body is 415", code == 415, f"{code} {body[:200]}")
        code, _, _ = srv.request("GET", "/api/v1/namespaces/plain", token=admin)
        check("text/plain body not stored", code == 404, str(code))

        # A list's resourceVersion that is not a uint64: 400.
        for rv in ("abc", str(2 ** 70)):
            code, body, _ = srv.request("GET", "/api/v1/namespaces?resourceVersion=" + rv, token=admin)
            check(f"list resourceVersion={rv[:8]} is 400", code == 400, f"{code} {body[:200]}")
        check("still serving at the end", srv.serving())
    finally:
        srv.stop()
    if FAILURES:
        print(f"{len(FAILURES)} failure(s)")
        sys.exit(1)
    print("all hostile-input probes passed")


if __name__ == "__main__":
    main()
