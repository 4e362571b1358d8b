"""What the `draplane up` e2e scripts share: kubectl calls, checks, polling, and
a cluster started on a free loopback port and torn down afterwards (its output
and component logs printed when a check failed).

Import it from a script in this directory (python puts the script's directory
on sys.path).
"""
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time

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


def wait(pred, timeout, what, step=0.25):
    """pred()'s first true value within timeout seconds; a failed check when none."""
    deadline = time.time() + timeout
    last = None
    while time.time() < deadline:
        last = pred()
        if last:
            return last
        time.sleep(step)
    check(False, 'timed out after %d s: %s' % (timeout, what))
    return last


def gpu_pod(name, claim_source, grace=1):
    """A busybox pod whose container uses pod claim "gpu" (claim_source:
    'resourceClaimName: X' or 'resourceClaimTemplateName: X')."""
    return '''
apiVersion: v1
kind: Pod
metadata: {name: %s, namespace: default}
spec:
  terminationGracePeriodSeconds: %d
  containers:
  - name: main
    image: busybox
    command: ["sh", "-c", "exec sleep 3600"]
    resources:
      claims: [{name: gpu}]
  resourceClaims:
  - {name: gpu, %s}
''' % (name, grace, claim_source)


def run_up(binary, args, body, prefix, log_tail=2000):
    """Runs `binary up ARGS` until ready, points KUBECONFIG at it and returns body(work_dir)
    (1 when the cluster did not come up); stops it and removes its files afterwards."""
    if not shutil.which('kubectl'):
        print('FAIL kubectl is not on PATH (scripts/setup installs one)')
        return 1
    work = tempfile.mkdtemp(prefix=prefix)
    log = open(os.path.join(work, 'up.log'), 'w+')
    proc = subprocess.Popen([binary, 'up', '--data-dir', os.path.join(work, 'data'), '--listen', '127.0.0.1:0',
                             *args], stdout=log, stderr=subprocess.STDOUT, start_new_session=True)

    def up_output():
        log.flush()
        with open(log.name) as f:
            return f.read()
    try:
        if not wait(lambda: 'ready\n' in up_output() or proc.poll() is not None, 90, 'draplane up ready'):
            return 1
        if not check(proc.poll() is None, 'draplane up is running'):
            return 1
        os.environ['KUBECONFIG'] = re.search(r'^kubeconfig: (.*)$', up_output(), re.M).group(1)
        return body(work)
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
                print(open(os.path.join(logs, f)).read()[-log_tail:])
        shutil.rmtree(work, ignore_errors=True)
