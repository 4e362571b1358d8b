"""A `draplane up` cluster for e2e scripts that drive it with the real kubectl.

    with UpCluster(binary, nodes='node-1=sim:2xH100') as up:
        up.kubectl('get', 'nodes')
        up.check(cond, 'what was checked')
    sys.exit(up.exit_code)

Entering starts `draplane up` on a free loopback port in a temporary directory,
waits for "ready" and points KUBECONFIG at it; leaving stops the process group
(SIGTERM, then SIGKILL after 30 s), prints the up output and component logs when
a check failed, and removes the directory. Checks print "ok"/"FAIL" lines.
"""
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time


class UpCluster:
    def __init__(self, binary, nodes, heartbeat=2, prefix='draplane-e2e-'):
        self.args = [binary, 'up', '--listen', '127.0.0.1:0', '--nodes', nodes, '--heartbeat', str(heartbeat)]
        self.prefix = prefix
        self.failures = []

    # Checks and waiting.
    def check(self, cond, what):
        print(('ok   ' if cond else 'FAIL ') + what, flush=True)
        if not cond:
            self.failures.append(what)
        return cond

    def wait(self, pred, timeout, what):
        """pred()'s first truthy value within timeout seconds; else a failed check and None."""
        end = time.time() + timeout
        while time.time() < end:
            got = pred()
            if got:
                return got
            time.sleep(0.2)
        self.check(False, 'timed out after %d s: %s' % (timeout, what))
        return None

    @property
    def exit_code(self):
        print('%d failure(s)' % len(self.failures))
        return 1 if self.failures else 0

    # kubectl.
    def kubectl(self, *args, stdin=None):
        p = subprocess.run(['kubectl', *args], input=stdin, capture_output=True, text=True, timeout=60)
        if p.returncode != 0:
            raise RuntimeError('kubectl %s: %s%s' % (' '.join(args), p.stdout, p.stderr))
        return p.stdout

    def kjson(self, *args):
        return json.loads(self.kubectl(*args, '-o', 'json'))

    def apply(self, objs):
        self.kubectl('apply', '-f', '-', stdin=json.dumps({'apiVersion': 'v1', 'kind': 'List', 'items': objs}))

    # The process.
    def _output(self):
        self.log.flush()
        with open(self.log.name) as f:
            return f.read()

    def __enter__(self):
        if not shutil.which('kubectl'):
            raise RuntimeError('kubectl is not on PATH (scripts/setup installs one)')
        self.dir = tempfile.mkdtemp(prefix=self.prefix)
        self.log = open(os.path.join(self.dir, 'up.log'), 'w+')
        self.proc = subprocess.Popen(self.args + ['--data-dir', os.path.join(self.dir, 'data')], stdout=self.log,
                                     stderr=subprocess.STDOUT, start_new_session=True)
        started = self.wait(lambda: 'ready\n' in self._output() or self.proc.poll() is not None, 90, 'draplane up ready')
        if not started or not self.check(self.proc.poll() is None, 'draplane up is running'):
            self.__exit__(None, None, None)
            raise RuntimeError('draplane up did not start')
        os.environ['KUBECONFIG'] = re.search(r'^kubeconfig: (.*)$', self._output(), re.M).group(1)
        return self

    def __exit__(self, kind, value, tb):
        os.killpg(self.proc.pid, signal.SIGTERM)
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
        if self.failures or kind is not None:
            print('--- draplane up output:\n' + self._output()[-3000:])
            logs = os.path.join(self.dir, 'data', 'logs')
            for name in sorted(os.listdir(logs)) if os.path.isdir(logs) else []:
                with open(os.path.join(logs, name)) as f:
                    print('--- %s (tail):\n%s' % (name, f.read()[-2500:]))
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)
        return False
