#!/usr/bin/env bash
# `draplane bench` through the CLI: every workload at a tiny size in process,
# two through the API server (SQLite and memory store), e2e on one node; --list, --json fields
# and usage errors. Each run checks its own result (a wrong one exits 1).
# Usage: bench_cli_test.sh DRAPLANE_BINARY SOURCE_DIR [inprocess|api]
bin=$1
part=${3:-inprocess}
. "$2/tests/cli/lib.sh"

run bench --list
expect_rc "--list" 0
expect_out_line "--list" "SchedulingWithResourceClaimTemplate"
names=$(grep -v '^ ' "$tmp/out")
[ "$(echo "$names" | wc -l)" -ge 12 ] || bad "--list names every workload"

json_ok() {  # what, mode
  expect_rc "$1" 0
  for field in '"workload":' "\"mode\":\"$2\"" '"nodes":' '"pods":' '"pods_per_second":' '"p50_ms":' '"p99_ms":' \
               '"peak_rss_mb":' '"allocator_calls":' '"check":"ok"'; do
    expect_out_has "$1" "$field"
  done
}

if [ "$part" = inprocess ]; then
  for w in $names; do
    run bench --workload "$w" --nodes 2 --duration 0.05 --timeout 60 --json
    json_ok "inprocess $w" inprocess
  done
  run bench --workload SchedulingWithResourceClaimTemplate --nodes 3
  expect_rc "table" 0
  expect_out_has "table" "measured pods  15 (15 bound, 0 unschedulable)"
  expect_out_has "table" "check          ok"

  # Scale curves at a tiny size: CSV on stdout and in --csv, an SVG plot with both sweeps
  # (a round is 10 pods of one device: at least 10 devices in every cluster).
  run bench --scale --scale-nodes 2,3 --scale-devices 5,8 --scale-base-nodes 2 --duration 0.05 --timeout 60 \
      --csv "$tmp/scale.csv" --plot "$tmp/scale.svg"
  expect_rc "--scale" 0
  expect_out_line "--scale" "axis,nodes,devices_per_node,devices,pods,cpu_ms_per_pod,allocator_calls_per_pod,pods_per_second,p50_ms,p99_ms,peak_rss_mb"
  expect_out_has "--scale" "nodes,3,10,30,"
  expect_out_has "--scale" "devices,2,8,16,"
  [ "$(wc -l < "$tmp/scale.csv")" -eq 5 ] || bad "--scale --csv: a header and 4 points"
  grep -q 'data-policy="devices/node grow"' "$tmp/scale.svg" || bad "--scale --plot: both sweeps drawn"

  run bench --workload Nope
  expect_rc "unknown workload" 2
  expect_err_has "unknown workload" 'unknown workload "Nope" (known: SchedulingWithResourceClaimTemplate,'
  run bench --nodes 2
  expect_rc "no workload" 2
  expect_err_has "no workload" "--workload is required"
  run bench --workload SchedulingWithResourceClaimTemplate --mode fast
  expect_rc "bad mode" 2
else
  run bench --workload SchedulingWithResourceClaimTemplate --mode api --nodes 2 --timeout 60 --json
  json_ok "api sqlite" api
  expect_out_has "api sqlite" '"store":"sqlite"'
  expect_out_has "api sqlite" '"pods":10,"bound":10'
  # The API requests of the measured phase: at least the 10 pods' creates and bindings.
  requests=$(sed -n 's/.*"api_requests_per_pod":\([0-9.]*\).*/\1/p' "$tmp/out")
  awk -v r="$requests" 'BEGIN { exit !(r >= 2 && r < 40) }' || bad "api sqlite: api_requests_per_pod '$requests' not in [2, 40)"
  run bench --workload SteadyStateClusterResourceClaimTemplate/full --mode api --store memory --nodes 2 \
      --duration 0.2 --timeout 60 --json
  json_ok "api memory steady full" api
  expect_out_has "api memory steady full" '"store":"memory"'
  # The whole system with a simulated node and its kubelet: 20 pods of `sleep 1` on 8 GPUs.
  run bench --mode e2e --nodes 1 --store memory --timeout 100 --json
  json_ok "e2e" e2e
  expect_out_has "e2e" '"pods":20,"bound":20'
fi
exit $fail
