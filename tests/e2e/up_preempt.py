#!/usr/bin/env python3
"""Priority preemption of a GPU against `draplane up` (issue 27), with kubectl.

Starts `draplane up --nodes node-1=sim:1xH100` (tests/e2e/up_cluster.py) and:
  1. PriorityClasses batch (0) and inference (1000); a batch pod with a claim
     for the node's only GPU runs;
  2. an inference pod with a claim for one GPU preempts it: the batch pod gets
     DisruptionTarget=True (reason PreemptionByScheduler) and is deleted, the
     inference pod is nominated for node-1 (both seen through a watch: the API
     server deletes a pod at once);
  3. the batch pod goes, its claim is deallocated by the claim controller, and
     the inference pod is bound to node-1 with the GPU;
     (it is in the KAI queue "serving": kubectl get queues shows 1 GPU allocated);
  4. a pod of higher priority (2000) with preemptionPolicy Never (class
     inference-never) is tried and does not preempt the inference pod.

Usage: up_preempt.py DRAPLANE_BINARY
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from up_cluster import UpCluster  # noqa: E402

BIN = sys.argv[1]
up = UpCluster(BIN, 'node-1=sim:1xH100', prefix='draplane-preempt-e2e-')  # started by main()
kubectl, kjson, check, wait, create = up.kubectl, up.kjson, up.check, up.wait, up.apply


def priority_class(name, value, policy=None):
    pc = {'apiVersion': 'scheduling.k8s.io/v1', 'kind': 'PriorityClass', 'metadata': {'name': name}, 'value': value}
    if policy:
        pc['preemptionPolicy'] = policy
    return pc


def claim_and_pod(name, pclass, queue=None):
    return [{'apiVersion': 'resource.k8s.io/v1', 'kind': 'ResourceClaim',
             'metadata': {'name': name, 'namespace': 'default'},
             'spec': {'devices': {'requests': [{'name': 'gpu', 'exactly': {'deviceClassName': 'gpu.nvidia.com'}}]}}},
            {'apiVersion': 'v1', 'kind': 'Pod',
             'metadata': {'name': name, 'namespace': 'default',
                          'labels': {'kai.scheduler/queue': queue} if queue else {}},
             'spec': {'terminationGracePeriodSeconds': 1, 'priorityClassName': pclass,
                      'containers': [{'name': 'main', 'image': 'busybox',
                                      'command': ['sleep', '3600'],
                                      'resources': {'claims': [{'name': 'gpu'}]}}],
                      'resourceClaims': [{'name': 'gpu', 'resourceClaimName': name}]}}]


def pod(name):
    for p in kjson('get', 'pods')['items']:
        if p['metadata']['name'] == name:
            return p
    return None


def claim(name):
    for c in kjson('get', 'resourceclaims')['items']:
        if c['metadata']['name'] == name:
            return c
    return None


def disruption_target(p):
    for c in (p or {}).get('status', {}).get('conditions', []):
        if c['type'] == 'DisruptionTarget':
            return c
    return None


def main():
    with up:
        create([priority_class('batch', 0), priority_class('inference', 1000),
                priority_class('inference-never', 2000, 'Never')])
        create(claim_and_pod('batch', 'batch'))
        wait(lambda: (pod('batch') or {}).get('spec', {}).get('nodeName'), 30, 'pod batch bound')
        create([{'apiVersion': 'scheduling.run.ai/v2', 'kind': 'Queue', 'metadata': {'name': 'serving'},
                 'spec': {'resources': {'gpu': {'quota': 1, 'limit': -1, 'overQuotaWeight': 1}}}}])
        # The API server deletes at once (no graceful pod deletion, docs/compat.md):
        # the victim's last states are read from a watch.
        watch_out = open(os.path.join(up.dir, 'watch.json'), 'w+')
        watch = subprocess.Popen(['kubectl', 'get', 'pods', '--watch', '--output-watch-events', '-o', 'json'],
                                 stdout=watch_out, stderr=subprocess.DEVNULL, text=True)
        wait(lambda: '"batch"' in open(watch_out.name).read(), 30, 'the watch shows batch')
        create(claim_and_pod('inference', 'inference', queue='serving'))
        wait(lambda: pod('batch') is None, 30, 'batch gone')
        # Nominated before it was bound (or still nominated: a watch event shows it).
        wait(lambda: (pod('inference') or {}).get('spec', {}).get('nodeName') == 'node-1', 30,
             'inference bound to node-1')
        watch.terminate()
        watch.wait(timeout=10)
        out = open(watch_out.name).read()
        events, dec, i = [], json.JSONDecoder(), 0
        while True:
            while i < len(out) and out[i].isspace():
                i += 1
            if i >= len(out):
                break
            ev, i = dec.raw_decode(out, i)
            events.append(ev)
        batch = [e for e in events if e['object']['metadata']['name'] == 'batch']
        marked = [e for e in batch if disruption_target(e['object'])]
        check(bool(marked), 'batch got a DisruptionTarget condition before it went (%d events)' % len(batch))
        if marked:
            dt = disruption_target(marked[0]['object'])
            check(dt['status'] == 'True' and dt['reason'] == 'PreemptionByScheduler',
                  'DisruptionTarget=True, reason PreemptionByScheduler: %s' % dt)
            check('default/inference' in dt.get('message', ''), 'the message names the preemptor: %s' % dt)
        check(any(e['type'] == 'DELETED' for e in batch), 'batch was deleted')
        check(any(e['object']['metadata']['name'] == 'inference' and
                  e['object'].get('status', {}).get('nominatedNodeName') == 'node-1' for e in events),
              'inference was nominated for node-1')
        wait(lambda: not (claim('batch') or {}).get('status', {}).get('allocation'), 30, 'batch claim deallocated')
        check(bool((claim('inference') or {}).get('status', {}).get('allocation')), 'inference claim allocated')
        # The queue's status, written by the scheduler, in kubectl's table.
        def queue_row():
            cols = kubectl('get', 'queues', '--no-headers').split()
            return cols if len(cols) == 8 and cols[5] == '1' else None
        cols = wait(queue_row, 30, 'queue serving shows 1 GPU allocated')
        if cols:
            check(cols[0] == 'serving' and cols[5:8] == ['1', '1', '1'],
                  'kubectl get queues: allocated, fair share, requested 1 GPU: %s' % cols)
        # preemptionPolicy Never: waits, evicts nothing.
        create(claim_and_pod('polite', 'inference-never'))
        wait(lambda: any(c['type'] == 'PodScheduled' and c['status'] == 'False'
                         for c in (pod('polite') or {}).get('status', {}).get('conditions', [])),
             30, 'polite tried and unschedulable')
        polite = pod('polite') or {}
        check(not polite.get('spec', {}).get('nodeName'), 'polite is not bound')
        check(not disruption_target(pod('inference')), 'inference is not preempted by a Never pod')
        check(not polite.get('status', {}).get('nominatedNodeName'), 'polite is not nominated')
    sys.exit(up.exit_code)


if __name__ == '__main__':
    main()
