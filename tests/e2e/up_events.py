#!/usr/bin/env python3
"""Events of `draplane up`, as an operator reads them with the real kubectl.

Starts `draplane up --nodes 1` (one node of 8x H100) on a free loopback port and:
  1. a pod that runs: `kubectl describe pod` shows Scheduled ("Successfully
     assigned default/<pod> to node-1", from default-scheduler), Created and
     Started (from kubelet) for its container;
  2. a pod no node fits (a claim for 100 GPUs): FailedScheduling, whose message
     is the pod's PodScheduled=False condition message;
  3. a pod whose claim carries a GpuConfig the driver rejects (sharing strategy
     "Bogus"): the scheduler places it, preparing fails on the node:
     FailedPrepareDynamicResources ("Failed to prepare dynamic resources: ...");
  4. `kubectl get events` lists all of these, and events.k8s.io/v1 serves the
     same Events (same names) in its own shape;
  5. deleting the running pod: Killing ("Stopping container main").

Usage: up_events.py DRAPLANE_BINARY
"""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

BIN = sys.argv[1]
FAILURES = []


def check(cond, what):
    print(('ok   ' if cond else 'FAIL ') + what, flush=True)
    if not cond:
        FAILURES.append(what)
    return cond


def kubectl(*args, stdin=None, ok=True):
    p = subprocess.run(['kubectl', *args], input=stdin, capture_output=True, text=True, timeout=120)
    if ok and p.returncode != 0:
        raise RuntimeError('kubectl %s: %s%s' % (' '.join(args), p.stdout, p.stderr))
    return p


def kjson(*args):
    return json.loads(kubectl(*args, '-o', 'json').stdout)


def wait(pred, timeout, what):
    deadline = time.time() + timeout
    last = None
    while time.time() < deadline:
        last = pred()
        if last:
            return last
        time.sleep(0.25)
    check(False, 'timed out after %d s: %s' % (timeout, what))
    return last


MANIFESTS = '''
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: one-gpu, namespace: default}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly: {deviceClassName: gpu.nvidia.com}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: hundred-gpus, namespace: default}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly: {deviceClassName: gpu.nvidia.com, count: 100}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: bogus-sharing, namespace: default}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly: {deviceClassName: gpu.nvidia.com}
      config:
      - requests: [gpu]
        opaque:
          driver: gpu.nvidia.com
          parameters:
            apiVersion: resource.nvidia.com/v1beta1
            kind: GpuConfig
            sharing: {strategy: Bogus}
'''


def pod(name, template):
    return '''
apiVersion: v1
kind: Pod
metadata: {name: %s, namespace: default}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: main
    image: busybox
    command: ["sh", "-c", "exec sleep 3600"]
    resources:
      claims: [{name: gpu}]
  resourceClaims:
  - {name: gpu, resourceClaimTemplateName: %s}
''' % (name, template)


def describe_events(name):
    """The rows of the Events section of `kubectl describe pod NAME`: (type, reason, from, message)."""
    out = kubectl('describe', 'pod', name).stdout
    if 'Events:' not in out:
        return []
    rows = []
    for line in out.split('Events:', 1)[1].splitlines():
        parts = re.split(r'\s{2,}', line.strip())
        if len(parts) >= 5 and parts[0] in ('Normal', 'Warning'):
            rows.append((parts[0], parts[1], parts[3], parts[4]))
    return rows


def has_row(name, kind, reason, source=None, message=None):
    for t, r, s, m in describe_events(name):
        if t == kind and r == reason and (source is None or s == source) and (message is None or message(m)):
            return True
    return False


def main():
    if not shutil.which('kubectl'):
        print('FAIL kubectl is not on PATH (scripts/setup installs one)')
        return 1
    work = tempfile.mkdtemp(prefix='draplane-events-e2e-')
    log = open(os.path.join(work, 'up.log'), 'w+')
    proc = subprocess.Popen([BIN, 'up', '--data-dir', os.path.join(work, 'data'), '--listen', '127.0.0.1:0',
                             '--nodes', '1', '--heartbeat', '2'],
                            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        return run(log, proc)
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
        if FAILURES:
            log.seek(0)
            print('--- draplane up output:\n' + log.read()[-4000:])
            logs = os.path.join(work, 'data', 'logs')
            for f in sorted(os.listdir(logs)) if os.path.isdir(logs) else []:
                print('--- %s (tail):' % f)
                print(open(os.path.join(logs, f)).read()[-2000:])
        shutil.rmtree(work, ignore_errors=True)


def run(log, proc):
    def up_output():
        log.flush()
        with open(log.name) as f:
            return f.read()
    if not wait(lambda: 'ready\n' in up_output() or proc.poll() is not None, 90, 'draplane up ready'):
        return 1
    if not check(proc.poll() is None, 'draplane up is running'):
        return 1
    os.environ['KUBECONFIG'] = re.search(r'^kubeconfig: (.*)$', up_output(), re.M).group(1)
    wait(lambda: kjson('get', 'resourceslices')['items'], 60, 'the node publishes its GPUs')

    kubectl('apply', '-f', '-', stdin=MANIFESTS)
    kubectl('apply', '-f', '-', stdin=pod('runs', 'one-gpu') + '---' + pod('bad-config', 'bogus-sharing'))
    # The unschedulable pod comes once the others hold their GPUs, so its
    # explanation (which counts free devices) no longer changes.
    wait(lambda: all(kjson('get', 'pod', n)['spec'].get('nodeName') for n in ('runs', 'bad-config')), 60,
         'pods runs and bad-config are bound')
    kubectl('apply', '-f', '-', stdin=pod('waits', 'hundred-gpus'))

    # 1. A running pod.
    wait(lambda: kjson('get', 'pod', 'runs').get('status', {}).get('phase') == 'Running', 60, 'pod runs is Running')
    check(wait(lambda: has_row('runs', 'Normal', 'Scheduled', 'default-scheduler',
                               lambda m: m == 'Successfully assigned default/runs to node-1'), 30,
               'describe runs: Scheduled'), 'describe pod runs shows Scheduled from default-scheduler')
    check(wait(lambda: has_row('runs', 'Normal', 'Created', 'kubelet', lambda m: m == 'Created container: main'), 30,
               'describe runs: Created'), 'describe pod runs shows Created from kubelet')
    check(wait(lambda: has_row('runs', 'Normal', 'Started', 'kubelet', lambda m: m == 'Started container main'), 30,
               'describe runs: Started'), 'describe pod runs shows Started from kubelet')

    # 2. An unschedulable pod: the event says what the condition says.
    def condition_message():
        for c in kjson('get', 'pod', 'waits').get('status', {}).get('conditions', []):
            if c.get('type') == 'PodScheduled' and c.get('status') == 'False':
                return c.get('message')
        return None
    msg = wait(condition_message, 30, 'pod waits: PodScheduled=False')
    check(bool(msg), 'pod waits is Unschedulable')
    check(wait(lambda: has_row('waits', 'Warning', 'FailedScheduling', 'default-scheduler'), 30,
               'describe waits: FailedScheduling'), 'describe pod waits shows FailedScheduling')
    # The pod may be tried before its claim exists ("not found"), then with
    # it: one event per message, repeats counted in the event's series; the
    # latest message catches up with the condition.
    def failed_scheduling():
        return kjson('get', 'events.v1.events.k8s.io', '--field-selector',
                     'regarding.name=waits,reason=FailedScheduling')['items']

    def note_is_condition():
        m = condition_message()
        return m if m and any(e.get('note') == m for e in failed_scheduling()) else None
    same = wait(note_is_condition, 30, 'a FailedScheduling note equal to the condition message')
    v1 = failed_scheduling()
    notes = [e.get('note') for e in v1]
    check(bool(same), 'the FailedScheduling note is the condition message (%r vs %r)' % (notes, condition_message()))
    check(len(notes) == len(set(notes)), 'repeats of one message are one event: %r' % notes)

    # 3. A claim the driver cannot prepare.
    check(wait(lambda: has_row('bad-config', 'Warning', 'FailedPrepareDynamicResources', 'kubelet',
                               lambda m: m.startswith('Failed to prepare dynamic resources: ') and 'Bogus' in m),
               60, 'describe bad-config: FailedPrepareDynamicResources'),
          'describe pod bad-config shows FailedPrepareDynamicResources naming the bad strategy')

    # 4. kubectl get events, and the same Events in events.k8s.io/v1.
    listed = kubectl('get', 'events').stdout
    for reason in ('Scheduled', 'Started', 'FailedScheduling', 'FailedPrepareDynamicResources'):
        check(re.search(r'\b%s\b' % reason, listed) is not None, 'kubectl get events lists %s' % reason)
    check(re.search(r'^LAST SEEN\s+TYPE\s+REASON\s+OBJECT\s+MESSAGE', listed, re.M) is not None,
          'kubectl get events has the kube-apiserver columns')
    core = {e['metadata']['name']: e for e in kjson('get', 'events')['items']}
    new = {e['metadata']['name']: e for e in kjson('get', 'events.v1.events.k8s.io')['items']}
    check(set(core) == set(new) and core, 'core/v1 and events.k8s.io/v1 serve the same Events')
    same = all(new[n].get('regarding', {}).get('uid') == core[n]['involvedObject'].get('uid') and
               new[n].get('note') == core[n].get('message') and new[n].get('reason') == core[n].get('reason')
               for n in core)
    check(same, 'each Event has the same object, reason and message in both versions')

    # 5. Deleting the running pod stops its container.
    uid = kjson('get', 'pod', 'runs')['metadata']['uid']
    kubectl('delete', 'pod', 'runs', '--wait=false')
    def killing():
        items = kjson('get', 'events', '--field-selector', 'involvedObject.uid=%s,reason=Killing' % uid)['items']
        return [e for e in items if e.get('message') == 'Stopping container main']
    check(bool(wait(killing, 30, 'Killing event')), 'deleting pod runs records Killing for its container')

    print('%d failure(s)' % len(FAILURES))
    return 1 if FAILURES else 0


if __name__ == '__main__':
    sys.exit(main())
