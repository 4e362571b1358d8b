#!/usr/bin/env python3
"""GPU sharing end to end with `draplane up` and the real kubectl (issue 25).

One node with 2 simulated H100 80GB (dynamic MIG). The DeviceClasses decide what
the agent publishes, and the agent follows them while it runs:
  1. the 000 seed's time-slicing class (replicas 4), applied as written: the GPUs
     become shareable (capacity `shares` 4); 4 pods with claims on it, in two
     namespaces, share one GPU and the 5th lands on the other GPU;
  2. deleting the class puts the whole GPUs back; an MPS class makes them
     memory-shaped: three claims of 20Gi share one GPU, a fourth of 30Gi goes to
     the other GPU;
  3. without sharing classes: 7 MIG 1g.10gb claims fill one H100, a full-GPU claim
     takes the other one, and a second full-GPU claim finds no room.
Pods are checked bound and their claims allocated (which device, which node).

Usage: up_sharing.py DRAPLANE_BINARY SOURCE_DIR
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from up_cluster import UpCluster  # noqa: E402

BIN = sys.argv[1]
SRC = sys.argv[2]
up = UpCluster(BIN, 'node-1=sim:2xH100', prefix='draplane-sharing-e2e-')  # started by main()
kubectl, kjson, check, wait, create = up.kubectl, up.kjson, up.check, up.wait, up.apply


def gpu_devices():
    """name -> published device of the node's full GPUs."""
    out = {}
    for s in kjson('get', 'resourceslices')['items']:
        for d in s['spec'].get('devices', []):
            if re.fullmatch(r'gpu-\d+', d['name']):
                out[d['name']] = d
    return out


def claim(name, ns, cls, memory=None, selector=None):
    exactly = {'deviceClassName': cls}
    if memory:
        exactly['capacity'] = {'requests': {'memory': memory}}
    if selector:
        exactly['selectors'] = [{'cel': {'expression': selector}}]
    return {'apiVersion': 'resource.k8s.io/v1', 'kind': 'ResourceClaim',
            'metadata': {'name': name, 'namespace': ns},
            'spec': {'devices': {'requests': [{'name': 'gpu', 'exactly': exactly}]}}}


def pod(name, ns):
    return {'apiVersion': 'v1', 'kind': 'Pod', 'metadata': {'name': name, 'namespace': ns},
            'spec': {'terminationGracePeriodSeconds': 0,
                     'containers': [{'name': 'main', 'image': 'busybox',
                                     'command': ['sh', '-c', 'echo "mps=$CUDA_MPS_PINNED_DEVICE_MEM_LIMIT '
                                                 'pct=$CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"; sleep 3600'],
                                     'resources': {'claims': [{'name': 'gpu'}]}}],
                     'resourceClaims': [{'name': 'gpu', 'resourceClaimName': name}]}}


def allocated(ns, name):
    """The device of an allocated claim, else None."""
    st = kjson('get', 'resourceclaim', '-n', ns, name).get('status', {})
    res = st.get('allocation', {}).get('devices', {}).get('results', [])
    return res[0]['device'] if res else None


def run_pods(specs, timeout=30):
    """specs: [(ns, name, claim)]; waits for every claim to be allocated; returns their devices."""
    create([c for _, _, c in specs] + [pod(n, ns) for ns, n, _ in specs])
    return wait(lambda: (lambda d: d if all(d) else None)([allocated(ns, n) for ns, n, _ in specs]), timeout,
                'claims %s allocated' % [n for _, n, _ in specs])


def all_running(pods, timeout=30):
    """pods: [(ns, name)]; waits until every pod is Running (its claim prepared on the node)."""
    def phases():
        got = [kjson('get', 'pod', '-n', ns, n).get('status', {}).get('phase') for ns, n in pods]
        return got if all(p == 'Running' for p in got) else None
    return wait(phases, timeout, 'pods %s Running' % [n for _, n in pods])


def cleanup(namespaces):
    for ns in namespaces:
        kubectl('delete', 'pods,resourceclaims', '--all', '-n', ns, '--wait=true', '--grace-period=0')


def main():
    with up:
        scenarios()
    return up.exit_code


def scenarios():
    wait(lambda: len(gpu_devices()) == 2, 30, 'the node publishes its 2 GPUs')
    kubectl('create', 'namespace', 'team-b')

    # 1. Time-slicing from the seed's class, as written.
    kubectl('apply', '-f', os.path.join(SRC, 'examples/seed-000/deviceclass-nvidia-gpu-timeslicing.yaml'))
    shares = wait(lambda: all('shares' in d.get('capacity', {}) for d in gpu_devices().values()) and gpu_devices(),
                  30, 'the agent republishes its GPUs with shares')
    if shares:
        d = shares['gpu-0']
        check(d.get('allowMultipleAllocations') is True and d['capacity']['shares'] ==
              {'value': '4', 'requestPolicy': {'default': '1', 'validRange': {'min': '1', 'max': '4', 'step': '1'}}},
              'gpu-0 is published shareable with shares 4 (default 1, 1..4): %s' % d['capacity'].get('shares'))
    ts = [('default' if i % 2 == 0 else 'team-b', 'ts-%d' % i) for i in range(5)]
    devs = run_pods([(ns, n, claim(n, ns, 'nvidia-gpu')) for ns, n in ts[:4]])
    check(devs is not None and len(set(devs)) == 1, '4 claims in 2 namespaces share one GPU: %s' % devs)
    fifth = run_pods([(ts[4][0], ts[4][1], claim(ts[4][1], ts[4][0], 'nvidia-gpu'))])
    check(devs is not None and fifth is not None and fifth[0] not in devs,
          'the 5th claim lands on the other GPU: %s' % fifth)
    bound = [kjson('get', 'pod', '-n', ns, n)['spec'].get('nodeName') for ns, n in ts]
    check(bound == ['node-1'] * 5, 'the 5 pods are bound to node-1: %s' % bound)
    check(all_running(ts) is not None, 'the 5 pods run: each share of a time-sliced GPU is prepared')
    cleanup(['default', 'team-b'])
    kubectl('delete', 'deviceclass', 'nvidia-gpu')
    check(wait(lambda: all(not d.get('allowMultipleAllocations') for d in gpu_devices().values()), 30,
               'whole GPUs again'), 'deleting the class republishes whole GPUs')

    # 2. MPS: memory-shaped GPUs.
    create([{'apiVersion': 'resource.k8s.io/v1', 'kind': 'DeviceClass', 'metadata': {'name': 'gpu-mps'},
             'spec': {'selectors': [{'cel': {'expression': "device.driver == 'gpu.nvidia.com' && "
                                                          "device.attributes['gpu.nvidia.com'].type == 'gpu'"}}],
                      'config': [{'opaque': {'driver': 'gpu.nvidia.com', 'parameters': {
                          'apiVersion': 'resource.nvidia.com/v1beta1', 'kind': 'GpuConfig',
                          'sharing': {'strategy': 'MPS'}}}}]}}])
    mem = wait(lambda: all(d['capacity']['memory'].get('requestPolicy') for d in gpu_devices().values())
               and gpu_devices(), 30, 'the agent republishes its GPUs with a memory request policy')
    if mem:
        check(mem['gpu-0']['capacity']['memory'] ==
              {'value': '81152Mi', 'requestPolicy': {'default': '81152Mi',
                                                     'validRange': {'min': '1Mi', 'max': '81152Mi', 'step': '1Mi'}}},
              'gpu-0 publishes memory as the driver does with --consumable-shares=memory: %s' %
              mem['gpu-0']['capacity']['memory'])
    devs = run_pods([('default', 'mps-%d' % i, claim('mps-%d' % i, 'default', 'gpu-mps', '20Gi')) for i in range(3)])
    check(devs is not None and len(set(devs)) == 1, 'three 20Gi MPS claims share one GPU: %s' % devs)
    big = run_pods([('default', 'mps-30', claim('mps-30', 'default', 'gpu-mps', '30Gi'))])
    check(devs is not None and big is not None and big[0] not in devs, 'the 30Gi claim goes to the other GPU: %s' % big)
    c = kjson('get', 'resourceclaim', 'mps-0').get('status', {}).get('allocation', {}).get('devices', {})
    check(c.get('results', [{}])[0].get('consumedCapacity', {}).get('memory') == '20Gi',
          'the claim records 20Gi of consumed memory')
    check(all_running([('default', 'mps-%d' % i) for i in range(3)] + [('default', 'mps-30')]) is not None,
          'the 4 MPS pods run')
    def output():
        try:
            out = kubectl('logs', 'mps-0')
        except RuntimeError:
            return None
        return out if 'mps=' in out else None
    logs = wait(output, 30, 'mps-0 output')
    check(logs is not None and re.search(r'mps=GPU-[0-9a-f-]+=20480M pct=26', logs),
          'an MPS share runs with its pinned memory (20Gi) and thread percentage in its environment: %s' % logs)
    cleanup(['default'])
    kubectl('delete', 'deviceclass', 'gpu-mps')
    wait(lambda: all(not d.get('allowMultipleAllocations') for d in gpu_devices().values()), 30, 'whole GPUs again')

    # 3. MIG: 7 x 1g.10gb fill one H100.
    one_g = "device.attributes['gpu.nvidia.com'].profile == '1g.10gb'"
    devs = run_pods([('default', 'mig-%d' % i, claim('mig-%d' % i, 'default', 'mig.nvidia.com', selector=one_g))
                     for i in range(7)])
    parents = sorted({d.split('-mig-')[0] for d in devs}) if devs else None
    check(devs is not None and len(set(devs)) == 7 and parents is not None and len(parents) == 1,
          '7 MIG 1g.10gb claims on one GPU: %s' % devs)
    full = run_pods([('default', 'full-1', claim('full-1', 'default', 'gpu.nvidia.com'))])
    check(full is not None and parents is not None and full[0] not in parents,
          'a full-GPU claim does not fit next to them and takes the other GPU: %s' % full)
    create([claim('full-2', 'default', 'gpu.nvidia.com'), pod('full-2', 'default')])

    def unschedulable():
        for cond in kjson('get', 'pod', 'full-2').get('status', {}).get('conditions', []):
            if cond.get('type') == 'PodScheduled' and cond.get('status') == 'False':
                return True
        return False
    check(wait(unschedulable, 30, 'full-2 unschedulable'), 'a second full-GPU claim finds no room')


if __name__ == '__main__':
    sys.exit(main())
