#!/usr/bin/env python3
"""A `draplane up` node whose GPUs come from NVML: the fake libnvidia-ml.so.1
(tests/node/fake_nvml) stands in for the driver, through `--gpus nvml:PATH`.

  1. the node publishes the fake's 8 H100s (its UUIDs, PCI bus ids, cliqueID);
  2. a pod with a one-GPU claim runs and its device shows Healthy;
  3. an XID 79 queued in the fake's event file (nvmlEventSetWait_v2 returns it)
     taints the pod's GPU gpu.nvidia.com/xid=79:NoSchedule in the slice and the
     pod shows it Unhealthy; an XID 13 on another GPU taints with effect None.

Usage: up_nvml.py DRAPLANE_BINARY FAKE_LIBNVIDIA_ML
"""
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from up_cluster import UpCluster  # noqa: E402
from up_health import TEMPLATE, Health, pod  # noqa: E402

BIN, FAKE = sys.argv[1], sys.argv[2]
UUID = 'GPU-4a7c2f0e-8d1b-4c3a-9e6f-5b2d0c1a%04x'


def run(up, events):
    h = Health(up)
    check, wait = up.check, up.wait
    slices = wait(lambda: up.kjson('get', 'resourceslices')['items'], 60, 'the node publishes its GPUs')
    devices = {d['name']: d for s in slices or [] for d in s['spec'].get('devices', [])}
    check(all('gpu-%d' % i in devices for i in range(8)), 'the 8 GPUs of the fake are published')
    g7 = devices.get('gpu-7', {}).get('attributes', {})
    check(g7.get('uuid', {}).get('string') == UUID % 7, 'gpu-7 has the fake UUID: %s' % g7.get('uuid'))
    check(g7.get('resource.kubernetes.io/pciBusID', {}).get('string') == '0000:db:00.0', 'gpu-7 PCI bus id')
    check(g7.get('cliqueID', {}).get('string', '').endswith('.1'), 'gpu-7 NVLink clique from fabric info')

    up.apply([TEMPLATE, pod('worker')])
    wait(lambda: up.kjson('get', 'pod', 'worker').get('status', {}).get('phase') == 'Running', 60, 'worker runs')
    device = h.allocated_device(h.claim_of('worker'))
    check(device is not None and device.startswith('gpu-'), 'the worker has a GPU: %s' % device)
    check(wait(lambda: h.pod_health('worker') == ['Healthy'], 30, 'worker Healthy'), 'its device shows Healthy')

    minor = int(device.split('-')[1])
    other = (minor + 1) % 8
    with open(events, 'a') as f:
        f.write('xid %d 79\nxid %d 13\n' % (minor, other))
    check(wait(lambda: ('gpu.nvidia.com/xid', '79', 'NoSchedule') in (h.taints(device) or []), 30,
               'the XID 79 taint'), '%s is tainted gpu.nvidia.com/xid=79:NoSchedule' % device)
    check(wait(lambda: h.pod_health('worker') == ['Unhealthy'], 30, 'worker Unhealthy'),
          'the pod shows its device Unhealthy')
    check(wait(lambda: ('gpu.nvidia.com/xid', '13', 'None') in (h.taints('gpu-%d' % other) or []), 30,
               'the XID 13 taint'), 'an application XID taints gpu-%d with effect None' % other)


def main():
    with tempfile.TemporaryDirectory(prefix='draplane-nvml-') as tmp:
        events = os.path.join(tmp, 'events')
        open(events, 'w').close()
        os.environ['FAKE_NVML_EVENTS'] = events
        os.environ.pop('FAKE_NVML_MIG', None)
        with UpCluster(BIN, nodes='node-1=nvml:%s?mig=none' % FAKE) as up:
            run(up, events)
        sys.exit(up.exit_code)


main()
