#!/usr/bin/python3
"""Crash test: write ResourceClaims in a loop, SIGKILL `draplane server` at a
random moment, restart it on the same data dir, and check that every
acknowledged write is there and that no revision repeats. Bounded: ROUNDS rounds.
Usage: server_crash.py DRAPLANE_BINARY [ROUNDS] [SEED]
"""
import http.client
import json
import os
import random
import signal
import ssl
import subprocess
import sys
import tempfile
import threading
import time

BIN = sys.argv[1]
ROUNDS = int(sys.argv[2]) if len(sys.argv) > 2 else 5
SEED = int(sys.argv[3]) if len(sys.argv) > 3 else int(time.time())
rng = random.Random(SEED)
print("seed", SEED)
data = tempfile.mkdtemp(prefix="draplane-crash-")


def start():
    log = open(os.path.join(data, "server.log"), "a")
    p = subprocess.Popen([BIN, "server", "--data-dir", data, "--listen", "127.0.0.1:0"], stdout=subprocess.PIPE,
                         stderr=log, text=True)
    url = None
    for line in p.stdout:
        if line.startswith("draplane server listening on "):
            url = line.split()[-1]
        if line.strip() == "ready":
            break
    assert url, "server did not start"
    host, port = url[len("https://"):].rsplit(":", 1)
    token = open(os.path.join(data, "tokens.csv")).readline().split(",")[0]
    ctx = ssl.create_default_context(cafile=os.path.join(data, "pki", "ca.crt"))
    return p, (host, int(port), token, ctx)


def request(conn_info, method, path, body=None):
    host, port, token, ctx = conn_info
    c = http.client.HTTPSConnection(host, port, context=ctx, timeout=10)
    c.request(method, path, body=json.dumps(body) if body else None,
              headers={"Authorization": "Bearer " + token, "Content-Type": "application/json"})
    r = c.getresponse()
    return r.status, json.loads(r.read() or b"{}")


PATH = "/apis/resource.k8s.io/v1/namespaces/default/resourceclaims"
acked = {}  # name -> resourceVersion
failures = []
for rnd in range(ROUNDS):
    proc, info = start()
    host, port, token, ctx = info
    # Everything acknowledged before must be there, unchanged.
    status, lst = request(info, "GET", PATH)
    assert status == 200, lst
    have = {i["metadata"]["name"]: i["metadata"]["resourceVersion"] for i in lst["items"]}
    missing = [n for n in acked if have.get(n) != acked[n]]
    if missing:
        failures.append("round %d: lost or changed acknowledged writes: %s" % (rnd, missing[:10]))
    stop = threading.Event()

    def writer():
        conn = http.client.HTTPSConnection(host, port, context=ctx, timeout=10)
        i = 0
        while not stop.is_set():
            name = "c-%d-%d" % (rnd, i)
            body = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": name},
                    "spec": {"devices": {"requests": [{"name": "g", "exactly": {"deviceClassName": "x"}}]}}}
            try:
                conn.request("POST", PATH, body=json.dumps(body),
                             headers={"Authorization": "Bearer " + token, "Content-Type": "application/json"})
                r = conn.getresponse()
                obj = json.loads(r.read())
            except Exception:
                return  # the server died: this write was not acknowledged
            if r.status == 201:
                acked[name] = obj["metadata"]["resourceVersion"]
            i += 1

    threads = [threading.Thread(target=writer) for _ in range(1)]
    for t in threads:
        t.start()
    time.sleep(rng.uniform(0.2, 1.2))
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    stop.set()
    for t in threads:
        t.join()
    print("round", rnd, "acknowledged so far", len(acked))

proc, info = start()
status, lst = request(info, "GET", PATH)
have = {i["metadata"]["name"]: i["metadata"]["resourceVersion"] for i in lst["items"]}
missing = [n for n in acked if have.get(n) != acked[n]]
if missing:
    failures.append("final: lost acknowledged writes: %s" % missing[:10])
rvs = [int(v) for v in acked.values()]
if len(set(rvs)) != len(rvs):
    failures.append("a revision repeated among acknowledged writes")
status, created = request(info, "POST", PATH, {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                                              "metadata": {"name": "after"},
                                              "spec": {"devices": {"requests": [{"name": "g", "exactly": {"deviceClassName": "x"}}]}}})
if status != 201 or int(created["metadata"]["resourceVersion"]) <= max(rvs or [0]):
    failures.append("revision after restart did not advance: %s" % created.get("metadata"))
proc.send_signal(signal.SIGTERM)
proc.wait()
print("acknowledged writes:", len(acked), "rounds:", ROUNDS)
if failures:
    print("\n".join(failures))
    sys.exit(1)
print("crash test: ok")
