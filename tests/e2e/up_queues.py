#!/usr/bin/env python3
"""Fair share between KAI queues against `draplane up` (issue 27), with kubectl.

Starts `draplane up --nodes 'node-1=sim:8xH100;node-2=sim:8xH100'` and:
  1. two scheduling.run.ai/v2 Queues, qa and qb, with no quota and equal
     over-quota weight; sixteen pods in qa (label kai.scheduler/queue), each
     with a claim for one GPU from a ResourceClaimTemplate: qb is idle, so all
     sixteen run (qa's fair share is the whole cluster);
  2. eight pods in qb: qb reclaims its half, so eight of qa's pods are
     preempted (DisruptionTarget, deleted) and all eight qb pods run: 8/8;
  3. kubectl get queues shows 8 GPUs allocated to each.

Usage: up_queues.py DRAPLANE_BINARY
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from up_cluster import UpCluster  # noqa: E402

BIN = sys.argv[1]
up = UpCluster(BIN, 'node-1=sim:8xH100;node-2=sim:8xH100', prefix='draplane-queues-e2e-')  # started by main()
kubectl, kjson, check, wait, create = up.kubectl, up.kjson, up.check, up.wait, up.apply

SHARE = {'gpu': {'quota': 0, 'limit': -1, 'overQuotaWeight': 1}}


def queue(name):
    return {'apiVersion': 'scheduling.run.ai/v2', 'kind': 'Queue', 'metadata': {'name': name},
            'spec': {'resources': SHARE}}


def pods_in(q, n):
    return [{'apiVersion': 'v1', 'kind': 'Pod',
             'metadata': {'name': '%s-%d' % (q, i), 'namespace': 'default', 'labels': {'kai.scheduler/queue': q}},
             'spec': {'terminationGracePeriodSeconds': 1,
                      'containers': [{'name': 'main', 'image': 'busybox', 'command': ['sleep', '3600'],
                                      'resources': {'claims': [{'name': 'gpu'}]}}],
                      'resourceClaims': [{'name': 'gpu', 'resourceClaimTemplateName': 'one-gpu'}]}}
            for i in range(n)]


def running(q):
    return [p['metadata']['name'] for p in kjson('get', 'pods')['items']
            if p['metadata'].get('labels', {}).get('kai.scheduler/queue') == q
            and p.get('status', {}).get('phase') == 'Running' and not p['metadata'].get('deletionTimestamp')]


def main():
    with up:
        create([queue('qa'), queue('qb'),
                {'apiVersion': 'resource.k8s.io/v1', 'kind': 'ResourceClaimTemplate',
                 'metadata': {'name': 'one-gpu', 'namespace': 'default'},
                 'spec': {'spec': {'devices': {'requests': [{'name': 'gpu', 'exactly': {
                     'deviceClassName': 'gpu.nvidia.com'}}]}}}}])
        create(pods_in('qa', 16))
        all_qa = wait(lambda: len(running('qa')) == 16, 90, 'all 16 qa pods run while qb is idle')
        check(bool(all_qa), 'qa borrows the idle queue\'s share: 16 running')
        create(pods_in('qb', 8))
        shared = wait(lambda: (len(running('qa')), len(running('qb'))) == (8, 8), 120,
                      'qb reclaims its half: 8 and 8 running')
        check(bool(shared), 'running qa/qb: %d/%d' % (len(running('qa')), len(running('qb'))))
        gone = wait(lambda: len([p for p in kjson('get', 'pods')['items']
                                 if p['metadata']['name'].startswith('qa-')]) == 8, 30,
                    'the eight preempted qa pods are gone')
        check(bool(gone), 'eight qa pods were preempted and are gone')

        def rows():
            out = {}
            for line in kubectl('get', 'queues', '--no-headers').splitlines():
                cols = line.split()
                if len(cols) == 8:
                    out[cols[0]] = cols
            return out if out.get('qa', [''] * 8)[5] == '8' and out.get('qb', [''] * 8)[5] == '8' else None
        table = wait(rows, 30, 'kubectl get queues: 8 GPUs allocated to each')
        if table:
            check(table['qa'][6] == '8' and table['qb'][6] == '8', 'fair share 8 each: %s' % table)
    sys.exit(up.exit_code)


if __name__ == '__main__':
    main()
