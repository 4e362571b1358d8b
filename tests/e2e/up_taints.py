#!/usr/bin/env python3
"""DeviceTaintRules against `draplane up`, as an operator uses them with kubectl.

Starts `draplane up --nodes node-1=sim:3xH100` on a free loopback port and:
  1. two pods, each with a claim for one GPU, run; "keeper"'s claim tolerates
     example.com/drain (NoExecute), "victim"'s does not;
  2. a DeviceTaintRule with effect NoExecute selecting the node's whole pool
     (both pods' devices): victim gets DisruptionTarget=True
     (DeletionByDeviceTaintManager) and is deleted, with an event naming its
     device and the taint; its claim is released and deallocated; keeper keeps
     running;
  3. the rule's status (EvictionInProgress, as `kubectl describe` shows it)
     reports the evicted pod;
  4. with that rule gone, a NoSchedule rule on the GPU victim had: a new claim
     gets another GPU.

Usage: up_taints.py DRAPLANE_BINARY
"""
import json
import os
import subprocess
import sys
import time

from up_lib import FAILURES, check, gpu_pod, kjson, kubectl, run_up, wait

BIN = sys.argv[1]


def claim_and_pod(name, tolerate, grace=1):
    tolerations = '''
        tolerations:
        - {key: example.com/drain, operator: Exists, effect: NoExecute}''' if tolerate else ''
    return '''
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: %(n)s, namespace: default}
spec:
  devices:
    requests:
    - name: gpu
      exactly:
        deviceClassName: gpu.nvidia.com%(t)s
''' % {'n': name, 't': tolerations} + '---' + gpu_pod(name, 'resourceClaimName: %s' % name, grace)


def rule(name, effect, selector):
    return '''
apiVersion: resource.k8s.io/v1
kind: DeviceTaintRule
metadata: {name: %s}
spec:
  deviceSelector: %s
  taint: {key: example.com/drain, value: test, effect: %s}
''' % (name, json.dumps(selector), effect)


def pod_json(name):
    p = kubectl('get', 'pod', name, '-o', 'json', ok=False)
    return json.loads(p.stdout) if p.returncode == 0 else None


def allocated_device(claim):
    a = kjson('get', 'resourceclaim', claim).get('status', {}).get('allocation')
    return a['devices']['results'][0] if a else None


def main():
    return run_up(BIN, ['--nodes', 'node-1=sim:3xH100', '--heartbeat', '2', '--store', 'memory'], run,
                  'draplane-taints-e2e-', log_tail=3000)


def run(work):
    wait(lambda: kjson('get', 'resourceslices')['items'], 60, 'the node publishes its GPUs')

    # 1. Two running pods.
    kubectl('apply', '-f', '-', stdin=claim_and_pod('victim', False, grace=5) + '---' + claim_and_pod('keeper', True))
    for n in ('victim', 'keeper'):
        wait(lambda: (pod_json(n) or {}).get('status', {}).get('phase') == 'Running', 60, 'pod %s is Running' % n)
    victim_dev = allocated_device('victim')
    keeper_dev = allocated_device('keeper')
    if not check(victim_dev and keeper_dev, 'both claims are allocated'):
        return 1
    victim_uid = pod_json('victim')['metadata']['uid']

    # 2. NoExecute on the whole pool evicts the pod that does not tolerate it.
    # A watch sees every version of victim, the short-lived last ones included.
    watch_out = open(os.path.join(work, 'victim.watch'), 'w+')
    watcher = subprocess.Popen(['kubectl', 'get', 'pod', 'victim', '--watch', '-o', 'json'], stdout=watch_out,
                               stderr=subprocess.DEVNULL)
    time.sleep(1)
    kubectl('apply', '-f', '-', stdin=rule('drain', 'NoExecute',
                                           {'driver': victim_dev['driver'], 'pool': victim_dev['pool']}))
    wait(lambda: (pod_json('victim') or {}).get('metadata', {}).get('uid') != victim_uid, 30, 'pod victim is deleted')
    time.sleep(0.5)
    watcher.terminate()
    watcher.wait()
    watch_out.seek(0)
    text, pos, c = watch_out.read(), 0, {}
    decoder = json.JSONDecoder()
    while pos < len(text):
        while pos < len(text) and text[pos].isspace():
            pos += 1
        if pos >= len(text):
            break
        version, pos = decoder.raw_decode(text, pos)
        for cond in version.get('status', {}).get('conditions', []):
            if cond.get('type') == 'DisruptionTarget':
                c = cond
    check(c.get('status') == 'True' and c.get('reason') == 'DeletionByDeviceTaintManager' and
          c.get('message') == 'Device Taint manager: deleting due to NoExecute taint',
          'victim had DisruptionTarget=True, DeletionByDeviceTaintManager (%r)' % c)
    events = kjson('get', 'events', '--field-selector',
                   'involvedObject.uid=%s,reason=DeviceTaintManagerEviction' % victim_uid)['items']
    want = '%s/%s/%s example.com/drain=test:NoExecute (DeviceTaintRule drain)' % (
        victim_dev['driver'], victim_dev['pool'], victim_dev['device'])
    check(any(want in e.get('message', '') for e in events),
          'an event on victim names the device and the taint (%r)' % [e.get('message') for e in events])
    check(wait(lambda: not kjson('get', 'resourceclaim', 'victim').get('status', {}).get('allocation'), 30,
               'claim victim is deallocated'), "victim's claim is released and deallocated")
    time.sleep(1)
    k = pod_json('keeper') or {}
    check(k.get('status', {}).get('phase') == 'Running' and not k['metadata'].get('deletionTimestamp'),
          'keeper, which tolerates the taint, keeps running')

    # 3. The rule's status counts the eviction (written at most every 10 s).
    def completed():
        for c in kjson('get', 'devicetaintrule', 'drain').get('status', {}).get('conditions', []):
            if c.get('type') == 'EvictionInProgress' and c.get('reason') == 'Completed':
                return c
        return None
    c = wait(completed, 30, 'rule drain: EvictionInProgress Completed') or {}
    check(c.get('status') == 'False' and c.get('message') == '1 pod evicted since starting the controller.',
          'the rule status reports 1 evicted pod (%r)' % c)
    described = kubectl('describe', 'devicetaintrule', 'drain').stdout
    check('1 pod evicted since starting the controller.' in described,
          'kubectl describe devicetaintrule shows the count')

    # 4. NoSchedule on the GPU victim had: a new claim gets another one.
    kubectl('delete', 'devicetaintrule', 'drain')
    kubectl('apply', '-f', '-', stdin=rule('cordon', 'NoSchedule', {'device': victim_dev['device']}))
    time.sleep(1)  # the scheduler sees the rule before the claim
    kubectl('apply', '-f', '-', stdin=claim_and_pod('newcomer', False))
    got = wait(lambda: allocated_device('newcomer'), 30, 'claim newcomer is allocated')
    check(got and got['device'] not in (victim_dev['device'], keeper_dev['device']),
          'the new claim avoids the NoSchedule-ruled GPU (%s, ruled %s)' % (got and got['device'], victim_dev['device']))

    print('%d failure(s)' % len(FAILURES))
    return 1 if FAILURES else 0


if __name__ == '__main__':
    sys.exit(main())
