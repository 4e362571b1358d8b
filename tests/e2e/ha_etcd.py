#!/usr/bin/env python3
"""Several API servers on one etcd cluster, one leader-elected scheduler (issue 30).

A 3-member etcd cluster on free loopback ports; API server A, and B started
with a copy of A's data directory (CA, serving certificate, tokens); two
`draplane scheduler` standbys and two node agents given both server URLs. A
stream of ResourceClaim and Pod creates goes through both servers while one
etcd member, then server B, then the scheduler leader are killed (SIGKILL).
Checks: every object a client got 201 for is there, a watch on A saw B's
writes in resourceVersion order, the standby scheduler took the Lease over, all
pods end up bound, no device is allocated to two claims.

Usage: ha_etcd.py DRAPLANE_BINARY    (exit 77 when etcd is not installed)
"""
import json
import os
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

from up_cluster import UpCluster

BIN = sys.argv[1]
PODS = 12  # two nodes of 8 GPUs: every pod fits
# Short election durations keep the takeover quick (the defaults are 15s/10s/2s).
ELECTION = ['--leader-elect-lease-duration', '3s', '--leader-elect-renew-deadline', '2s',
            '--leader-elect-retry-period', '500ms']


def free_ports(n):
    socks = [socket.socket() for _ in range(n)]
    for s in socks:
        s.bind(('127.0.0.1', 0))
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


# The shared harness's check/wait (no `draplane up` is started).
CHECKS = UpCluster(BIN, nodes='')
check, wait, FAILURES = CHECKS.check, CHECKS.wait, CHECKS.failures


class Api:
    """Admin REST calls to one server (urllib; TLS with the cluster CA)."""

    def __init__(self, url, ca, token):
        self.url, self.token = url, token
        self.ctx = ssl.create_default_context(cafile=ca)

    def call(self, method, path, body=None, timeout=10):
        req = urllib.request.Request(self.url + path, method=method,
                                     data=json.dumps(body).encode() if body is not None else None,
                                     headers={'Authorization': 'Bearer ' + self.token,
                                              'Content-Type': 'application/json'})
        try:
            with urllib.request.urlopen(req, context=self.ctx, timeout=timeout) as r:
                return r.status, json.loads(r.read() or b'{}')
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read() or b'{}')
        except (OSError, urllib.error.URLError) as e:
            return 0, {'error': str(e)}

    def get(self, path):
        code, body = self.call('GET', path)
        return body if code == 200 else None


def claim(name):
    return {'apiVersion': 'resource.k8s.io/v1', 'kind': 'ResourceClaim',
            'metadata': {'name': name, 'namespace': 'default'},
            'spec': {'devices': {'requests': [{'name': 'gpu', 'exactly': {'deviceClassName': 'gpu.example.com'}}]}}}


def pod(name, claim_name):
    return {'apiVersion': 'v1', 'kind': 'Pod', 'metadata': {'name': name, 'namespace': 'default'},
            'spec': {'resourceClaims': [{'name': 'gpu', 'resourceClaimName': claim_name}],
                     'containers': [{'name': 'main', 'image': 'busybox', 'command': ['sleep', '3600'],
                                     'resources': {'claims': [{'name': 'gpu'}]}}]}}


class Cluster:
    def __init__(self):
        base = '/dev/shm' if os.path.isdir('/dev/shm') else None
        self.dir = tempfile.mkdtemp(prefix='draplane-ha-', dir=base)
        self.procs = {}
        self.logs = {}

    def spawn(self, name, args):
        log = open(os.path.join(self.dir, name + '.log'), 'a')  # a restart appends
        self.logs[name] = log.name
        self.procs[name] = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                            start_new_session=True)
        return self.procs[name]

    def kill9(self, name):
        p = self.procs.pop(name)
        os.killpg(p.pid, signal.SIGKILL)
        p.wait()

    def log(self, name):
        with open(self.logs[name]) as f:
            return f.read()

    def stop(self):
        for name, p in list(self.procs.items()):
            try:
                os.killpg(p.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        for name, p in list(self.procs.items()):
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
        if FAILURES:
            for name, path in self.logs.items():
                with open(path) as f:
                    print('--- %s ---\n%s' % (name, f.read()[-3000:]))
        shutil.rmtree(self.dir, ignore_errors=True)


def start_etcd(c):
    ports = free_ports(6)
    peers = ','.join('e%d=http://127.0.0.1:%d' % (i, ports[2 * i + 1]) for i in range(3))
    endpoints = []
    for i in range(3):
        client, peer = ports[2 * i], ports[2 * i + 1]
        endpoints.append('127.0.0.1:%d' % client)
        c.spawn('etcd%d' % i, ['etcd', '--name', 'e%d' % i, '--data-dir', os.path.join(c.dir, 'etcd%d' % i),
                               '--listen-client-urls', 'http://127.0.0.1:%d' % client,
                               '--advertise-client-urls', 'http://127.0.0.1:%d' % client,
                               '--listen-peer-urls', 'http://127.0.0.1:%d' % peer,
                               '--initial-advertise-peer-urls', 'http://127.0.0.1:%d' % peer,
                               '--initial-cluster', peers, '--initial-cluster-state', 'new',
                               '--initial-cluster-token', 'draplane-ha', '--logger=zap', '--log-level=error'])
    return endpoints


def start_server(c, name, data, port, store):
    c.spawn(name, [BIN, 'server', '--data-dir', data, '--listen', '127.0.0.1:%d' % port, '--store', store,
                   '--nodes', 'node-a,node-b', '--no-scheduler'] + ELECTION)
    return wait(lambda: 'ready' in c.log(name) or c.procs[name].poll() is not None, 30, name + ' ready') and \
        c.procs[name].poll() is None


def main():
    if shutil.which('etcd') is None:
        print('etcd not on PATH: skipped')
        return 77
    c = Cluster()
    try:
        return run(c)
    finally:
        c.stop()


def run(c):
    endpoints = start_etcd(c)
    store = 'etcd://' + ','.join(endpoints)
    pa, pb = free_ports(2)
    data_a, data_b = os.path.join(c.dir, 'a'), os.path.join(c.dir, 'b')
    if not check(start_server(c, 'server-a', data_a, pa, store), 'server A serves on the etcd cluster'):
        return 1
    shutil.copytree(data_a, data_b, ignore=shutil.ignore_patterns('logs', 'state.db*'))
    if not check(start_server(c, 'server-b', data_b, pb, store), 'server B serves with a copy of A\'s data dir'):
        return 1
    url_a, url_b = 'https://127.0.0.1:%d' % pa, 'https://127.0.0.1:%d' % pb
    tokens = {}
    with open(os.path.join(data_a, 'tokens.csv')) as f:
        for line in f:
            parts = line.strip().split(',', 3)
            tokens[parts[1]] = parts[0]
    ca = os.path.join(data_a, 'pki', 'ca.crt')
    a, b = Api(url_a, ca, tokens['admin']), Api(url_b, ca, tokens['admin'])
    check(b.get('/api/v1/namespaces/default') is not None, 'A\'s admin token and CA work against B')

    code, _ = a.call('POST', '/apis/resource.k8s.io/v1/deviceclasses', {
        'apiVersion': 'resource.k8s.io/v1', 'kind': 'DeviceClass', 'metadata': {'name': 'gpu.example.com'},
        'spec': {'selectors': [{'cel': {'expression': 'device.driver == "gpu.nvidia.com"'}}]}})
    check(code == 201, 'DeviceClass created through A')
    # Agents: node-b's talks to B first and must fail over to A when B dies.
    for node, servers in (('node-a', url_a + ',' + url_b), ('node-b', url_b + ',' + url_a)):
        c.spawn('agent-' + node, [BIN, 'agent', '--node', node, '--server', servers,
                                  '--token', tokens['system:node:' + node], '--certificate-authority', ca,
                                  '--gpus', 'sim:8xH100', '--mig', 'none', '--heartbeat', '1', '--log-port', '-1',
                                  '--state-dir', os.path.join(c.dir, 'agent-' + node)])
    def start_scheduler(name):
        c.spawn(name, [BIN, 'scheduler', '--kubeconfig', os.path.join(data_a, 'kubeconfig'),
                       '--master', url_a + ',' + url_b] + ELECTION)
    for i in (1, 2):
        start_scheduler('scheduler-%d' % i)

    def slices_ready():
        got = a.get('/apis/resource.k8s.io/v1/resourceslices')
        return got and len({s['spec']['nodeName'] for s in got['items'] if s['spec'].get('nodeName')}) == 2
    wait(slices_ready, 30, 'both agents published their ResourceSlices')
    start_rv = a.get('/apis/resource.k8s.io/v1/namespaces/default/resourceclaims')['metadata']['resourceVersion']

    # A watch on A from before the stream: it must see B's writes too, in order.
    seen = []
    watch_done = threading.Event()

    def watch_a():
        import http.client
        conn = http.client.HTTPSConnection('127.0.0.1', pa, context=a.ctx, timeout=60)
        conn.request('GET', '/apis/resource.k8s.io/v1/namespaces/default/resourceclaims?watch=1&resourceVersion='
                     + start_rv, headers={'Authorization': 'Bearer ' + tokens['admin']})
        r = conn.getresponse()
        try:
            while not watch_done.is_set():
                line = r.readline()
                if not line:
                    break
                ev = json.loads(line)
                if ev['type'] == 'ADDED':
                    seen.append((int(ev['object']['metadata']['resourceVersion']), ev['object']['metadata']['name']))
        except (OSError, ValueError):
            pass
        conn.close()
    watcher = threading.Thread(target=watch_a, daemon=True)
    watcher.start()

    acked = {'claims': set(), 'pods': set()}
    through_b = set()
    servers = {'A': a, 'B': b}

    def create(kind, path, body, first):
        """POST through `first`, then the other server on a transport error or 5xx."""
        name = body['metadata']['name']
        for s in (first, 'B' if first == 'A' else 'A'):
            for _ in range(50):
                code, _ = servers[s].call('POST', path, body)
                if code == 201:
                    acked[kind].add(name)
                    if s == 'B' and kind == 'claims':
                        through_b.add(name)
                    return
                if code == 409:
                    return  # an earlier try landed although its answer was lost
                if code == 0:
                    break  # server gone: the other one
                time.sleep(0.2)  # 5xx while etcd elects a leader: again

    kills = {3: 'etcd0', 6: 'server-b'}
    for i in range(PODS):
        if i in kills:
            c.kill9(kills[i])
            print('killed %s' % kills[i], flush=True)
        if i == 9:
            # etcd0's death can stall renewals past the renew deadline: the
            # leader then exits (as kube-scheduler does) and the other takes
            # over. Its supervisor (the kubelet, for a static pod) restarts it.
            for n in ('scheduler-1', 'scheduler-2'):
                if c.procs[n].poll() is not None:
                    print('%s exited (%s): restarted' % (n, c.procs[n].returncode), flush=True)
                    start_scheduler(n)

            def live_holder():
                leader = lease_holder(a)
                held = [n for n in ('scheduler-1', 'scheduler-2')
                        if leader and c.procs[n].poll() is None and (' as %s...' % leader) in c.log(n)]
                return held if len(held) == 1 else None
            victim = wait(live_holder, 10, 'a live scheduler holds the Lease') or []
            check(len(victim) == 1, 'exactly one live scheduler holds the Lease (holder %s)' % lease_holder(a))
            if victim:
                c.kill9(victim[0])
                print('killed %s' % victim[0], flush=True)
        first = 'B' if i % 2 and 'server-b' in c.procs else 'A'
        create('claims', '/apis/resource.k8s.io/v1/namespaces/default/resourceclaims', claim('c-%d' % i), first)
        create('pods', '/api/v1/namespaces/default/pods', pod('p-%d' % i, 'c-%d' % i), first)

    check(len(acked['claims']) == PODS and len(acked['pods']) == PODS,
          'every create was acknowledged by one server (%d claims, %d pods)' % (len(acked['claims']), len(acked['pods'])))
    check(through_b, 'some claims were created through B (%s)' % sorted(through_b))

    def all_bound():
        got = a.get('/api/v1/namespaces/default/pods')
        if not got:
            return None
        bound = {p['metadata']['name'] for p in got['items'] if p['spec'].get('nodeName')}
        return got if acked['pods'] <= bound else None
    pods = wait(all_bound, 40, 'all pods bound after the scheduler leader died')
    standby = [n for n in ('scheduler-1', 'scheduler-2') if n in c.procs]
    check(standby and 'successfully acquired lease' in c.log(standby[0]), 'the standby scheduler took the Lease over')
    lease = a.get('/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/draplane-scheduler')
    check(lease and lease['spec'].get('leaseTransitions', 0) >= 1, 'the Lease counts the transition')

    claims = a.get('/apis/resource.k8s.io/v1/namespaces/default/resourceclaims')['items']
    names = {x['metadata']['name'] for x in claims}
    check(acked['claims'] <= names, 'no acknowledged claim lost')
    if pods:
        check(acked['pods'] <= {p['metadata']['name'] for p in pods['items']}, 'no acknowledged pod lost')
    devices = []
    for x in claims:
        for r in (x.get('status', {}).get('allocation') or {}).get('devices', {}).get('results', []):
            devices.append((r['driver'], r['pool'], r['device']))
    check(len(devices) == PODS, '%d claims allocated' % len(devices))
    check(len(devices) == len(set(devices)), 'no device allocated twice')

    wait(lambda: {n for _, n in seen} >= acked['claims'], 10, 'the watch on A saw every claim')
    watch_done.set()
    rvs = [rv for rv, _ in seen]
    check(rvs == sorted(rvs) and len(set(rvs)) == len(rvs), 'the watch on A delivered in resourceVersion order')
    check(through_b <= {n for _, n in seen}, 'the watch on A saw the claims created through B')
    # node-b's agent talked to B first: its heartbeats went on through A.
    node = a.get('/api/v1/nodes/node-b')
    beats = [cond.get('lastHeartbeatTime', '') for cond in (node or {}).get('status', {}).get('conditions', [])]
    time.sleep(2.5)
    node = a.get('/api/v1/nodes/node-b')
    beats2 = [cond.get('lastHeartbeatTime', '') for cond in (node or {}).get('status', {}).get('conditions', [])]
    check(beats2 and beats2 != beats, 'the agent given B first kept its heartbeats through A')
    print('%d failure(s)' % len(FAILURES))
    return 1 if FAILURES else 0


def lease_holder(api):
    lease = api.get('/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/draplane-scheduler')
    return lease['spec'].get('holderIdentity', '') if lease else ''


if __name__ == '__main__':
    sys.exit(main())
