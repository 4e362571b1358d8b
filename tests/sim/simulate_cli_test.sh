#!/usr/bin/env bash
# `draplane simulate` through the CLI: a hand-made cluster and task list (always),
# then a short run of the shipped trace when ../shared/data is there.
# Usage: simulate_cli_test.sh DRAPLANE_BINARY SOURCE_DIR png|nopng (whether the build has cairo)
set -euo pipefail
bin=$1
src=$2
png=${3:-nopng}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

cat > "$tmp/nodes.csv" <<'CSV'
sn,cpu_milli,memory_mib,gpu,model
n0,16000,65536,1,T4
n1,16000,65536,2,P100
CSV
cat > "$tmp/tasks.csv" <<'CSV'
name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec
t0,1000,1024,1,400,
t1,1000,1024,1,400,
t2,1000,1024,1,1000,P100
t3,1000,1024,0,0,
CSV

# JSON: the fields the issue names, ratios as fractions of 1.
out=$("$bin" simulate --nodes "$tmp/nodes.csv" --trace "$tmp/tasks.csv" --policy best-fit --seed 7 --json -q \
      --csv "$tmp/curve.csv")
python3 - "$out" <<'PY'
import json, sys
r = json.loads(sys.argv[1])
for k in ["policy", "seed", "tasks", "scheduled_tasks", "failed_tasks", "gpu_allocation_ratio",
          "allocation_ratio_at_100", "fragmented_gpu_ratio", "seconds"]:
    assert k in r, k
assert r["policy"] == "best-fit" and r["seed"] == 7, r
assert r["scheduled_tasks"] + r["failed_tasks"] == r["tasks"], r
assert 0 < r["gpu_allocation_ratio"] <= 1, r
assert 0 <= r["fragmented_gpu_ratio"] <= 1, r
PY
head -1 "$tmp/curve.csv" | grep -qx 'policy,seed,arrived_pct,allocated,fragmented,frag_rate' || fail "csv header"
[ "$(wc -l < "$tmp/curve.csv")" -gt 1 ] || fail "csv has no points"

# --plot: an SVG with one solid and one dashed curve per policy.
"$bin" simulate --nodes "$tmp/nodes.csv" --trace "$tmp/tasks.csv" --policy first-fit,fgd --seeds 2 -q --plot "$tmp/c.svg" >/dev/null
python3 - "$tmp/c.svg" <<'PY'
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
lines = [e for e in root.iter() if e.tag.endswith("polyline")]
assert sorted((e.get("class"), e.get("data-policy")) for e in lines) == [
    ("allocated", "fgd"), ("allocated", "first-fit"), ("fragmented", "fgd"), ("fragmented", "first-fit")], lines
PY
# --plot FILE.png: a valid PNG of 720x480 (signature, IHDR, CRCs, and the
# image data inflates to 480 rows) with cairo; without it a clear usage error.
set +e
err=$("$bin" simulate --nodes "$tmp/nodes.csv" --trace "$tmp/tasks.csv" --policy first-fit,fgd -q --plot "$tmp/c.png" 2>&1); rc=$?
set -e
if [ "$png" = png ]; then
  [ $rc -eq 0 ] || fail "png plot: rc $rc $err"
  python3 - "$tmp/c.png" <<'PY'
import struct, sys, zlib
data = open(sys.argv[1], "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG signature"
pos, chunks, idat = 8, [], b""
while pos < len(data):
    n, kind = struct.unpack(">I4s", data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + n]
    assert struct.unpack(">I", data[pos + 8 + n:pos + 12 + n])[0] == zlib.crc32(kind + body), kind
    chunks.append(kind)
    if kind == b"IDAT":
        idat += body
    pos += 12 + n
assert chunks[0] == b"IHDR" and chunks[-1] == b"IEND", chunks
w, h, depth, color = struct.unpack(">IIBB", data[16:26])
assert (w, h) == (720, 480), (w, h)
raw = zlib.decompress(idat)
bpp = {2: 3, 6: 4}[color] * depth // 8
assert len(raw) == h * (1 + w * bpp), len(raw)
rows = [raw[r * (1 + w * bpp) + 1:(r + 1) * (1 + w * bpp)] for r in range(h)]
assert len(set(rows)) > 50, "the image looks blank"
PY
else
  [ $rc -eq 2 ] && grep -q -- '--plot: .*built without cairo' <<<"$err" || fail "png plot without cairo: rc $rc $err"
fi
set +e
err=$("$bin" simulate --nodes "$tmp/nodes.csv" --trace "$tmp/tasks.csv" --plot "$tmp/c.gif" 2>&1); rc=$?
set -e
[ $rc -eq 2 ] && grep -q -- '--plot: .*must end in .svg or .png' <<<"$err" || fail "gif plot: rc $rc $err"

# Table: one row per policy and seed.
table=$("$bin" simulate --nodes "$tmp/nodes.csv" --trace "$tmp/tasks.csv" --policy first-fit,fgd --seed 1 --seed 2 -q)
[ "$(grep -cE '^(first-fit|fgd) ' <<<"$table")" -eq 4 ] || fail "table rows: $table"

# --compare: every policy, one row of means each.
summary=$("$bin" simulate --nodes "$tmp/nodes.csv" --trace "$tmp/tasks.csv" --compare --seeds 3 -q)
[ "$(grep -cE '^(first-fit|random|dot-product|gpu-clustering|gpu-packing|best-fit|fgd|draplane) +3 ' <<<"$summary")" -eq 8 ] \
  || fail "compare rows: $summary"
grep -q "^first-fit: Kubernetes' default" <<<"$summary" || fail "first-fit not labelled as Kubernetes' default: $summary"

# Replay: the tiny trace with times; a node list has none and fails as usage.
cat > "$tmp/timed.csv" <<'CSV'
name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time
a,1000,1024,1,1000,,LS,Running,0,10,0
b,1000,1024,2,1000,,LS,Running,5,20,5
CSV
out=$("$bin" simulate --nodes "$tmp/nodes.csv" --trace "$tmp/timed.csv" --mode replay --policy fgd --json -q)
python3 -c 'import json,sys; r=json.loads(sys.argv[1]); assert r["mode"]=="replay" and r["peak_allocation_ratio"]==1.0 and r["allocation_ratio_at_100"] is None, r' "$out"
set +e
err=$("$bin" simulate --nodes "$tmp/nodes.csv" --trace "$tmp/tasks.csv" --mode replay -q 2>&1); rc=$?
set -e
[ $rc -eq 2 ] && grep -q 'replay needs creation_time' <<<"$err" || fail "replay without times: rc $rc $err"

# Manifests: the example cluster and workload (examples/sim), through the
# allocator with the cross-check on; replay follows the sim-arrival and
# sim-duration annotations (fgd places all five pods; peak 4 of 6 GPUs).
out=$("$bin" simulate --cluster "$src/examples/sim/cluster.yaml" --workload "$src/examples/sim/workload.yaml" --verify --json -q)
python3 -c 'import json,sys; r=json.loads(sys.argv[1]); assert r["policy"]=="draplane" and r["gpu_capacity_milli"]==6000 and r["scheduled_tasks"]>0, r' "$out"
out=$("$bin" simulate --cluster "$src/examples/sim/cluster.yaml" --workload "$src/examples/sim/workload.yaml" --mode replay --policy fgd --verify --json -q)
python3 -c 'import json,sys; r=json.loads(sys.argv[1]); assert r["tasks"]==5 and r["failed_tasks"]==0 and abs(r["peak_allocation_ratio"]-4/6)<1e-9, r' "$out"
set +e
err=$("$bin" simulate --cluster "$src/examples/sim/workload.yaml" --workload "$src/examples/sim/workload.yaml" 2>&1); rc=$?
set -e
[ $rc -eq 2 ] && grep -q -- '--cluster: .*a cluster holds Nodes, ResourceSlices and DeviceClasses' <<<"$err" || fail "workload as cluster: rc $rc $err"

# Usage errors name the flag, exit 2.
set +e
err=$("$bin" simulate --nodes "$tmp/nodes.csv" --trace "$tmp/tasks.csv" --policy tetris 2>&1); rc=$?
set -e
[ $rc -eq 2 ] || fail "bad policy: rc $rc"
grep -q -- '--policy: unknown policy "tetris"' <<<"$err" || fail "bad policy message: $err"
set +e
err=$("$bin" simulate --nodes "$tmp/missing.csv" --trace "$tmp/tasks.csv" 2>&1); rc=$?
set -e
[ $rc -eq 2 ] || fail "missing nodes: rc $rc"
grep -q -- "--nodes: $tmp/missing.csv: cannot open file" <<<"$err" || fail "missing nodes message: $err"

# The shipped trace, a short prefix of the run, with the allocator cross-check on.
if [ -f "$src/../shared/data/openb/openb_node_list_gpu_node.csv" ]; then
  out=$("$bin" simulate --policy fgd --max-tasks 800 --verify --json -q)
  python3 -c 'import json,sys; r=json.loads(sys.argv[1]); assert r["tasks"]==800 and r["scheduled_tasks"]>0, r' "$out"
else
  echo "skip: no shipped trace"
fi
echo PASS
