#!/usr/bin/env python3
"""Gangs through Kubernetes' Workload API against `draplane up` (issue 27), with kubectl.

Starts `draplane up --nodes node-1=sim:8xH100` (tests/e2e/up_cluster.py) and:
  1. a pod with a claim for one GPU runs ("other"), leaving 7 GPUs free;
  2. a scheduling.k8s.io/v1beta1 Workload and its PodGroup (gang, minCount 8)
     and eight pods with spec.schedulingGroup.podGroupName, each with a claim
     for one GPU: no pod bound, no claim allocated, and the PodGroup's
     PodGroupInitiallyScheduled condition is False/Unschedulable saying what
     is missing (`kubectl get podgroups` shows it);
  3. "other" is deleted: the whole gang runs and the condition turns True;
  4. a Job with spec.scheduling (gang, minCount from parallelism) gets a
     Workload and a PodGroup from the Job controller, its pods name the
     PodGroup, and it completes;
  5. the gang's pods are deleted; a PodGroup with spec.resourceClaims naming a
     ResourceClaimTemplate (KEP-5729) and two members with the same entry: the
     claim controller makes one claim, owned by the PodGroup and named in its
     status and in both members' statuses; both members run sharing its two
     GPUs, and the claim is reserved for the PodGroup, not the pods; it stays
     allocated when the members go and is deleted with the PodGroup.

Usage: up_workload.py DRAPLANE_BINARY
"""
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from up_cluster import UpCluster  # noqa: E402

BIN = sys.argv[1]
up = UpCluster(BIN, 'node-1=sim:8xH100', prefix='draplane-workload-e2e-')  # started by main()
kubectl, kjson, check, wait, create = up.kubectl, up.kjson, up.check, up.wait, up.apply

MEMBERS = ['w%d' % i for i in range(8)]
GANG = {'gang': {'minCount': 8}}


def claim_and_pod(name, group=None):
    spec = {'terminationGracePeriodSeconds': 1,
            'containers': [{'name': 'main', 'image': 'busybox', 'command': ['sleep', '3600'],
                            'resources': {'claims': [{'name': 'gpu'}]}}],
            'resourceClaims': [{'name': 'gpu', 'resourceClaimName': name}]}
    if group:
        spec['schedulingGroup'] = {'podGroupName': group}
    return [{'apiVersion': 'resource.k8s.io/v1', 'kind': 'ResourceClaim',
             'metadata': {'name': name, 'namespace': 'default'},
             'spec': {'devices': {'requests': [{'name': 'gpu', 'exactly': {'deviceClassName': 'gpu.nvidia.com'}}]}}},
            {'apiVersion': 'v1', 'kind': 'Pod', 'metadata': {'name': name, 'namespace': 'default'}, 'spec': spec}]


def pods():
    return {p['metadata']['name']: p for p in kjson('get', 'pods')['items']}


def find(resource, name):
    return next((x for x in kjson('get', resource)['items'] if x['metadata']['name'] == name), None)


def group_condition(name):
    g = find('podgroups', name) or {}
    for c in g.get('status', {}).get('conditions', []):
        if c['type'] == 'PodGroupInitiallyScheduled':
            return c
    return None


def gang_part():
    create(claim_and_pod('other'))
    wait(lambda: pods().get('other', {}).get('spec', {}).get('nodeName'), 30, 'pod other bound')
    create([{'apiVersion': 'scheduling.k8s.io/v1beta1', 'kind': 'Workload',
             'metadata': {'name': 'train', 'namespace': 'default'},
             'spec': {'podGroupTemplates': [{'name': 'workers', 'schedulingPolicy': GANG}]}},
            {'apiVersion': 'scheduling.k8s.io/v1beta1', 'kind': 'PodGroup',
             'metadata': {'name': 'train-workers', 'namespace': 'default'},
             'spec': {'workloadRef': {'workloadName': 'train', 'templateName': 'workers'},
                      'schedulingPolicy': GANG}}])
    create([o for m in MEMBERS for o in claim_and_pod(m, 'train-workers')])
    cond = wait(lambda: (lambda c: c if c and c['status'] == 'False' else None)(group_condition('train-workers')),
                30, 'the PodGroup says the gang does not fit')
    if cond:
        check(cond['reason'] == 'Unschedulable', 'reason Unschedulable: %s' % cond)
        check('only 7 of 8 pods fit (needs 8 devices of class gpu.nvidia.com)' in cond['message'],
              'the message says what is missing: %s' % cond['message'])
    ps = pods()
    check(not any(ps[m]['spec'].get('nodeName') for m in MEMBERS), 'no member is bound')
    claims = {c['metadata']['name']: c for c in kjson('get', 'resourceclaims')['items']}
    check(not any(claims[m].get('status', {}).get('allocation') for m in MEMBERS), 'no member claim holds a device')
    table = kubectl('get', 'podgroups')
    check('False' in table and 'Gang' in table, 'kubectl get podgroups:\n' + table)
    kubectl('delete', 'pod', 'other', '--wait=false')
    bound = wait(lambda: all(p.get('spec', {}).get('nodeName') for p in (pods().get(m, {}) for m in MEMBERS)),
                 60, 'the whole gang bound once the eighth GPU is free')
    check(bool(bound), 'all 8 members run on node-1')
    cond = wait(lambda: (lambda c: c if c and c['status'] == 'True' else None)(group_condition('train-workers')),
                30, 'PodGroupInitiallyScheduled True')
    check(bool(cond), 'the PodGroup is scheduled')


def job_part():
    # Applied with kubectl's client-side validation: the served OpenAPI has
    # JobSpec's spec.scheduling (1.37).
    job = ({'apiVersion': 'batch/v1', 'kind': 'Job', 'metadata': {'name': 'pair', 'namespace': 'default'},
             'spec': {'parallelism': 2, 'completions': 2,
                      'scheduling': {'schedulingPolicy': {'gang': {}}},
                      'template': {'spec': {'restartPolicy': 'Never', 'terminationGracePeriodSeconds': 1,
                                            'containers': [{'name': 'main', 'image': 'busybox',
                                                            'command': ['echo', 'hi']}]}}}})
    kubectl('apply', '-f', '-', stdin=json.dumps(job))
    g = wait(lambda: find('podgroups', 'pair'), 30, 'the Job controller made a PodGroup')
    if g:
        check(g['spec']['schedulingPolicy'] == {'gang': {'minCount': 2}}, 'minCount from parallelism: %s' % g['spec'])
        check(g['spec'].get('workloadRef', {}).get('workloadName') == 'pair', 'it names the Workload: %s' % g['spec'])
    w = find('workloads', 'pair')
    check(w is not None and w['spec'].get('controllerRef', {}).get('kind') == 'Job',
          'a Workload with the Job as controllerRef: %s' % w)
    done = wait(lambda: any(c['type'] == 'Complete' and c['status'] == 'True'
                            for c in kjson('get', 'job', 'pair').get('status', {}).get('conditions', [])),
                60, 'job pair Complete')
    check(bool(done), 'the gang Job completes')
    jp = [p for p in pods().values() if p['metadata'].get('labels', {}).get('job-name') == 'pair']
    check(jp and all(p['spec'].get('schedulingGroup', {}).get('podGroupName') == 'pair' for p in jp),
          "the Job's pods name its PodGroup")


def group_claim_part():
    kubectl('delete', 'pods', *MEMBERS, '--wait=true', '--timeout=60s')
    shared = {'name': 'shared', 'resourceClaimTemplateName': 'two-gpus'}
    objs = [{'apiVersion': 'resource.k8s.io/v1', 'kind': 'ResourceClaimTemplate',
             'metadata': {'name': 'two-gpus', 'namespace': 'default'},
             'spec': {'spec': {'devices': {'requests': [{'name': 'gpus', 'exactly': {
                 'deviceClassName': 'gpu.nvidia.com', 'count': 2}}]}}}},
            {'apiVersion': 'scheduling.k8s.io/v1beta1', 'kind': 'PodGroup',
             'metadata': {'name': 'pair-domain', 'namespace': 'default'},
             'spec': {'schedulingPolicy': {'gang': {'minCount': 2}}, 'resourceClaims': [shared]}}]
    for m in ('s0', 's1'):
        objs.append({'apiVersion': 'v1', 'kind': 'Pod', 'metadata': {'name': m, 'namespace': 'default'},
                     'spec': {'terminationGracePeriodSeconds': 1, 'schedulingGroup': {'podGroupName': 'pair-domain'},
                              'containers': [{'name': 'main', 'image': 'busybox', 'command': ['sleep', '3600'],
                                              'resources': {'claims': [{'name': 'shared'}]}}],
                              'resourceClaims': [shared]}})
    create(objs)
    running = wait(lambda: all(pods().get(m, {}).get('status', {}).get('phase') == 'Running' for m in ('s0', 's1')),
                   60, 'both members of the PodGroup run')
    check(bool(running), 'the members sharing the group claim run')
    g = find('podgroups', 'pair-domain') or {}
    named = {s['name']: s.get('resourceClaimName') for s in g.get('status', {}).get('resourceClaimStatuses', [])}
    claim_name = named.get('shared')
    check(bool(claim_name) and claim_name.startswith('pair-domain-shared-'),
          'the PodGroup status names its claim: %s' % g.get('status'))
    ps = pods()
    for m in ('s0', 's1'):
        st = {s['name']: s.get('resourceClaimName') for s in ps[m].get('status', {}).get('resourceClaimStatuses', [])}
        check(st.get('shared') == claim_name, '%s names the group claim: %s' % (m, st))
    claim = find('resourceclaims', claim_name) or {}
    owners = claim.get('metadata', {}).get('ownerReferences', [])
    check([(o['kind'], o['name']) for o in owners] == [('PodGroup', 'pair-domain')], 'owned by the PodGroup: %s' % owners)
    reserved = claim.get('status', {}).get('reservedFor', [])
    check([(r.get('apiGroup'), r['resource'], r['name']) for r in reserved] ==
          [('scheduling.k8s.io', 'podgroups', 'pair-domain')], 'reserved for the PodGroup: %s' % reserved)
    results = claim.get('status', {}).get('allocation', {}).get('devices', {}).get('results', [])
    check(len(results) == 2, 'two GPUs for the pair: %s' % results)
    mine = [c for c in kjson('get', 'resourceclaims')['items'] if c['metadata']['name'].startswith(('s0-', 's1-'))]
    check(not mine, 'no per-pod claims: %s' % [c['metadata']['name'] for c in mine])
    # The members go: the group still holds its claim. The group goes: so does the claim.
    kubectl('delete', 'pods', 's0', 's1', '--wait=true', '--timeout=60s')
    # Read for 5 s, not once: the claim controller handles the pods' deletion
    # soon after, and a release would show then.
    deadline = time.time() + 5
    held = True
    while held and time.time() < deadline:
        held = bool((find('resourceclaims', claim_name) or {}).get('status', {}).get('allocation'))
        time.sleep(0.5)
    check(held, 'the claim stays allocated for the PodGroup without its pods (5 s)')
    kubectl('delete', 'podgroup', 'pair-domain')
    gone = wait(lambda: find('resourceclaims', claim_name) is None, 30, 'the group claim goes with its PodGroup')
    check(bool(gone), 'the PodGroup took its claim along')
    if not gone:
        print(kubectl('get', 'resourceclaims', claim_name, '-o', 'yaml'))


def main():
    with up:
        gang_part()
        job_part()
        group_claim_part()
    sys.exit(up.exit_code)


if __name__ == '__main__':
    main()
