#!/usr/bin/env python3
"""DeviceTaintRules against `draplane up`, as an operator uses them with kubectl.

Starts `draplane up --nodes node-1=sim:3xH100` (tests/e2e/up_cluster.py) and:
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

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from up_cluster import UpCluster  # noqa: E402

BIN = sys.argv[1]
up = UpCluster(BIN, 'node-1=sim:3xH100', prefix='draplane-taints-e2e-')  # started by main()
kubectl, kjson, check, wait, create = up.kubectl, up.kjson, up.check, up.wait, up.apply

DRAIN = {'key': 'example.com/drain', 'operator': 'Exists', 'effect': 'NoExecute'}


def claim_and_pod(name, tolerate, grace):
    exactly = {'deviceClassName': 'gpu.nvidia.com'}
    if tolerate:
        exactly['tolerations'] = [DRAIN]
    return [{'apiVersion': 'resource.k8s.io/v1', 'kind': 'ResourceClaim',
             'metadata': {'name': name, 'namespace': 'default'},
             'spec': {'devices': {'requests': [{'name': 'gpu', 'exactly': exactly}]}}},
            {'apiVersion': 'v1', 'kind': 'Pod', 'metadata': {'name': name, 'namespace': 'default'},
             'spec': {'terminationGracePeriodSeconds': grace,
                      'containers': [{'name': 'main', 'image': 'busybox', 'command': ['sleep', '3600'],
                                      'resources': {'claims': [{'name': 'gpu'}]}}],
                      'resourceClaims': [{'name': 'gpu', 'resourceClaimName': name}]}}]


def rule(name, effect, selector):
    return {'apiVersion': 'resource.k8s.io/v1', 'kind': 'DeviceTaintRule', 'metadata': {'name': name},
            'spec': {'deviceSelector': selector,
                     'taint': {'key': 'example.com/drain', 'value': 'test', 'effect': effect}}}


def pod_json(name):
    """The pod, or None once it is gone."""
    items = kjson('get', 'pods', '--field-selector', 'metadata.name=' + name)['items']
    return items[0] if items else None


def allocated_device(claim):
    a = kjson('get', 'resourceclaim', claim).get('status', {}).get('allocation')
    return a['devices']['results'][0] if a else None


def watched_condition(path, kind):
    """The last `kind` condition in the versions a `kubectl get --watch -o json` wrote to path."""
    with open(path) as f:
        text = f.read()
    pos, found, decoder = 0, {}, json.JSONDecoder()
    while True:
        while pos < len(text) and text[pos].isspace():
            pos += 1
        if pos >= len(text):
            return found
        version, pos = decoder.raw_decode(text, pos)
        for cond in version.get('status', {}).get('conditions', []):
            if cond.get('type') == kind:
                found = cond


def main():
    with up:
        wait(lambda: kjson('get', 'resourceslices')['items'], 60, 'the node publishes its GPUs')

        # 1. Two running pods.
        create(claim_and_pod('victim', False, 5) + claim_and_pod('keeper', True, 0))
        for n in ('victim', 'keeper'):
            wait(lambda: (pod_json(n) or {}).get('status', {}).get('phase') == 'Running', 60, 'pod %s is Running' % n)
        victim_dev, keeper_dev = allocated_device('victim'), allocated_device('keeper')
        if not check(victim_dev and keeper_dev, 'both claims are allocated'):
            return up.exit_code
        victim_uid = pod_json('victim')['metadata']['uid']

        # 2. NoExecute on the whole pool evicts the pod that does not tolerate it.
        # A watch sees every version of victim, the short-lived last ones included.
        watch_path = os.path.join(up.dir, 'victim.watch')
        with open(watch_path, 'w') as out:
            watcher = subprocess.Popen(['kubectl', 'get', 'pod', 'victim', '--watch', '-o', 'json'], stdout=out,
                                       stderr=subprocess.DEVNULL)
            time.sleep(1)
            create([rule('drain', 'NoExecute', {'driver': victim_dev['driver'], 'pool': victim_dev['pool']})])
            wait(lambda: (pod_json('victim') or {}).get('metadata', {}).get('uid') != victim_uid, 30,
                 'pod victim is deleted')
            time.sleep(0.5)
            watcher.terminate()
            watcher.wait()
        c = watched_condition(watch_path, 'DisruptionTarget')
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
        k = pod_json('keeper') or {'metadata': {}}
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
        check('1 pod evicted since starting the controller.' in kubectl('describe', 'devicetaintrule', 'drain'),
              'kubectl describe devicetaintrule shows the count')

        # 4. NoSchedule on the GPU victim had: a new claim gets another one.
        kubectl('delete', 'devicetaintrule', 'drain')
        create([rule('cordon', 'NoSchedule', {'device': victim_dev['device']})])
        time.sleep(1)  # the scheduler sees the rule before the claim
        create(claim_and_pod('newcomer', False, 0))
        got = wait(lambda: allocated_device('newcomer'), 30, 'claim newcomer is allocated')
        check(got and got['device'] not in (victim_dev['device'], keeper_dev['device']),
              'the new claim avoids the NoSchedule-ruled GPU (%s, ruled %s)' %
              (got and got['device'], victim_dev['device']))
    return up.exit_code


if __name__ == '__main__':
    sys.exit(main())
